import { describe, expect, it } from 'vitest';
import { brokerUrlOptions } from './transport.js';

describe('a broker URL as mqtt.js connection options', () => {
  it.each([
    ['mqtt://broker.lan', { protocol: 'mqtt', hostname: 'broker.lan', port: 1883 }],
    ['mqtts://broker.lan:8884', { protocol: 'mqtts', hostname: 'broker.lan', port: 8884 }],
    ['tls://[::1]', { protocol: 'mqtts', hostname: '::1', port: 8883 }],
    ['ws://127.0.0.1:9001/mqtt', { protocol: 'ws', hostname: '127.0.0.1', port: 9001, path: '/mqtt' }],
    ['wss://[::1]/mqtt?x=1', { protocol: 'wss', hostname: '[::1]', port: 443, path: '/mqtt?x=1' }],
  ])('%s', (url, options) => {
    expect(brokerUrlOptions(url)).toEqual(options);
  });

  it('refuses a scheme that is not MQTT', () => {
    expect(() => brokerUrlOptions('http://broker.lan')).toThrow(/unsupported MQTT URL scheme/);
  });
});
