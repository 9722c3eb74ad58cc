import { describe, expect, it } from 'vitest';
import { classifyMqttError, topicMatches } from './connection.js';

describe('topicMatches', () => {
  it.each([
    ['a/b', 'a/b', true],
    ['a/+', 'a/b', true],
    ['a/+', 'a/b/c', false],
    ['a/#', 'a/b/c', true],
    ['a/#', 'a', true],
    ['+/status/switch:0', 'shelly/status/switch:0', true],
    ['go-eCharger/1/+', 'go-eCharger/1/amp/set', false],
    ['a/b', 'a/c', false],
  ])('%s vs %s → %s', (filter, topic, expected) => {
    expect(topicMatches(filter, topic)).toBe(expected);
  });
});

describe('classifyMqttError', () => {
  it('maps refusals, TLS failures and the rest', () => {
    expect(classifyMqttError(Object.assign(new Error('Connection refused: Not authorized'), { code: 5 }))).toBe('MQTT_AUTH_REJECTED');
    expect(classifyMqttError(Object.assign(new Error('bad user'), { code: 134 }))).toBe('MQTT_AUTH_REJECTED');
    expect(classifyMqttError(Object.assign(new Error('x'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }))).toBe('MQTT_TLS_FAILED');
    expect(classifyMqttError(Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))).toBe('MQTT_TLS_FAILED');
    expect(classifyMqttError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('MQTT_UNAVAILABLE');
    expect(classifyMqttError(Object.assign(new Error('server unavailable'), { code: 3 }))).toBe('MQTT_UNAVAILABLE');
    expect(classifyMqttError(null)).toBe('MQTT_UNAVAILABLE');
  });
});
