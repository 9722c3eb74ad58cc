/**
 * Cross-field rules on MQTT topics and device outputs, found by `check` before `run` meets them:
 * wattshift's own topics (the base topic and Home Assistant's discovery prefix) are its alone, and
 * no output (a relay, a charger) is driven by two devices.
 */
import { z } from 'zod';
import type { DeviceConfig, OcppSource, SourceConfig } from './schema-devices.js';
import type { ReportIssue } from './cross-check.js';

/** The mqtt section's own topics as far as they parse; invalid ones are reported by the schema. */
const ownTopicsSchema = z.looseObject({
  baseTopic: z.string().default('wattshift'),
  discovery: z.looseObject({ enabled: z.boolean().default(true), prefix: z.string().default('homeassistant') }).prefault({}),
});

type Path = (string | number)[];
type AnySource = SourceConfig | OcppSource;

/** The topics (or topic prefixes) a source reads or writes, with the key that names each. */
function sourceTopics(s: AnySource): [string, string][] {
  switch (s.type) {
    case 'shelly':
    case 'goe':
      return [['topicPrefix', s.topicPrefix]];
    case 'amsreader':
      return [['topic', s.topic]];
    case 'mqtt':
      return (['stateTopic', 'commandTopic', 'currentTopic'] as const).flatMap((k) => (s[k] === undefined ? [] : [[k, s[k]] as [string, string]]));
    default:
      return [];
  }
}

/** What a switch or charger source drives, named for the user; one output has one name. */
function outputOf(s: AnySource): string | undefined {
  switch (s.type) {
    // Two devices on one unit id of one bus would answer the same requests.
    case 'modbus':
      return `unit ${s.unitId} on Modbus bus "${s.bus}"`;
    case 'shelly':
      return `switch ${s.switchId} of Shelly ${s.topicPrefix}`;
    case 'tasmota':
      return `relay ${s.relay} of Tasmota ${s.topic}`;
    case 'goe':
      return `go-e charger ${s.topicPrefix}`;
    case 'ocpp':
      return `connector ${s.connectorId} of charge point ${s.chargePointId}`;
    case 'mqtt':
      return s.commandTopic ?? s.currentTopic;
    default:
      return undefined;
  }
}

function sourcesWithPaths(d: DeviceConfig, at: Path): [AnySource, Path, boolean][] {
  const out: [AnySource, Path, boolean][] = [];
  const add = (s: AnySource | undefined, role: string, drives: boolean): void => {
    if (s) out.push([s, [...at, role], drives]);
  };
  // A solar source reads its own topics (see checkTopicsAndOutputs).
  if (d.kind === 'solar') return out;
  add(d.meter, 'meter', false);
  if (d.kind === 'hotWaterTank') {
    add(d.switch, 'switch', true);
    add(d.thermometer, 'thermometer', false);
  } else if (d.kind === 'evCharger') {
    add(d.charger, 'charger', true);
  } else if (d.kind === 'heatPump') {
    add(d.contacts.relay1, 'contacts.relay1', true);
    add(d.contacts.relay2, 'contacts.relay2', true);
    add(d.thermometer, 'thermometer', false);
  } else if (d.kind === 'zone') {
    add(d.switch, 'switch', true);
    add(d.thermometer, 'thermometer', false);
  }
  return out;
}

const under = (topic: string, root: string): boolean => topic === root || topic.startsWith(`${root}/`);

/** The problem of a topic that lies under wattshift's own topics, or undefined. */
export function ownTopicProblem(mqtt: unknown, topic: string): string | undefined {
  const own = mqtt === undefined ? undefined : ownTopicsSchema.safeParse(mqtt).data;
  if (!own) return undefined;
  const roots: [string, string][] = [
    [own.baseTopic, 'mqtt.baseTopic'],
    ...(own.discovery.enabled ? [[own.discovery.prefix, 'mqtt.discovery.prefix'] as [string, string]] : []),
  ];
  const root = roots.find(([r]) => under(topic, r));
  return root ? `"${topic}" is under ${root[1]} "${root[0]}", wattshift's own topics` : undefined;
}

export function checkTopicsAndOutputs(mqtt: unknown, devices: readonly (DeviceConfig | undefined)[], issue: ReportIssue): void {
  const own = mqtt === undefined ? undefined : ownTopicsSchema.safeParse(mqtt).data;
  const roots: [string, string][] = [];
  if (own) {
    roots.push([own.baseTopic, 'mqtt.baseTopic']);
    if (own.discovery.enabled) {
      if (under(own.discovery.prefix, own.baseTopic) || under(own.baseTopic, own.discovery.prefix)) {
        issue(
          ['mqtt', 'discovery', 'prefix'],
          `the discovery prefix "${own.discovery.prefix}" and the base topic "${own.baseTopic}" must not contain each other`,
        );
      }
      roots.push([own.discovery.prefix, 'mqtt.discovery.prefix']);
    }
  }
  const drivenBy = new Map<string, string>();
  devices.forEach((d, i) => {
    if (!d) return;
    const at: Path = ['devices', i];
    const topics: [Path, string][] = [];
    for (const [s, path, drives] of sourcesWithPaths(d, at)) {
      for (const [key, topic] of sourceTopics(s)) topics.push([[...path, key], topic]);
      const output = drives ? outputOf(s) : undefined;
      if (output === undefined) continue;
      const other = drivenBy.get(output);
      if (other !== undefined && other !== d.id) issue(path, `${output} is already driven by device "${other}"`);
      else drivenBy.set(output, d.id);
    }
    if (d.kind === 'evCharger' && d.soc) topics.push([[...at, 'soc', 'topic'], d.soc.topic]);
    if (d.kind === 'solar' && d.source.type === 'mqtt') {
      topics.push([[...at, 'source', 'energyTopic'], d.source.energyTopic]);
      if (d.source.powerTopic) topics.push([[...at, 'source', 'powerTopic'], d.source.powerTopic]);
    }
    if (d.kind === 'zone' && d.thermostat) {
      topics.push([[...at, 'thermostat', 'commandTopic'], d.thermostat.commandTopic], [[...at, 'thermostat', 'stateTopic'], d.thermostat.stateTopic]);
    }
    for (const [path, topic] of topics) {
      const root = roots.find(([r]) => under(topic, r));
      if (root) issue(path, `"${topic}" is under ${root[1]} "${root[0]}", wattshift's own topics`);
    }
  });
}
