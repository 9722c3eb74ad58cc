/**
 * The schema of a Modbus device profile: a register map as data. Built-in profiles live in
 * `profiles/*.yaml`; users write their own in the same shape and point `profile:` at
 * the file. Addresses are 0-based protocol addresses (30073 in Modicon notation = 0x48).
 */
import { z } from 'zod';
import { registerCount, registerTypes } from './codec.js';

const endianness = z.enum(['big', 'little']);
const address = z.int().min(0).max(0xffff);

/** Names the daemon's capabilities look for. Profiles may define others (for `wattshift probe`). */
export const wellKnownPoints = [
  'energyKwh',
  'exportEnergyKwh',
  'powerW',
  'temperatureC',
  'relay',
  'relayLeaseS',
  'currentLimitA',
  'plugged',
  'charging',
  'socPct',
  'heartbeat',
] as const;

export const pointSchema = z
  .strictObject({
    description: z.string().optional(),
    /** holding = FC03 (write FC06/FC16), input = FC04, coil = FC01 (write FC05), discrete = FC02. */
    function: z.enum(['holding', 'input', 'coil', 'discrete']),
    address,
    /** Register type; registers only. Default uint16. */
    type: z.enum(registerTypes).optional(),
    wordOrder: endianness.default('big'),
    byteOrder: endianness.default('big'),
    /** Applied after bitShift/bitMask: value = raw · scale + offset. */
    scale: z
      .number()
      .finite()
      .refine((v) => v !== 0, 'scale must not be 0')
      .default(1),
    offset: z.number().finite().default(0),
    /** Bit extraction before scaling: raw = (raw >> bitShift) & bitMask. Integer types only. */
    bitShift: z.int().min(0).max(31).optional(),
    bitMask: z.int().min(1).max(0xffffffff).optional(),
    /** When set, the point is a boolean: true iff the raw value is one of these. */
    trueValues: z.array(z.int()).min(1).optional(),
    unit: z.string().optional(),
    /** Sane range of the engineering value; a reading outside is DEVICE_BAD_VALUE, a write is refused. */
    min: z.number().finite().optional(),
    max: z.number().finite().optional(),
    access: z.enum(['read', 'write', 'readWrite']).optional(),
    /** Registers: write with FC06 ('single') or FC16 ('multiple'). Default: single for 1 word, else multiple. */
    writeWith: z.enum(['single', 'multiple']).optional(),
    /** Channels on multi-channel boards: channel n uses address + n·channelStride. */
    channels: z.int().min(1).max(256).default(1),
    channelStride: z.int().min(1).optional(),
  })
  .superRefine((p, ctx) => {
    const bits = p.function === 'coil' || p.function === 'discrete';
    if (bits && p.type !== undefined) ctx.addIssue({ code: 'custom', message: `${p.function} points have no type` });
    if (!bits && (p.bitShift !== undefined || p.bitMask !== undefined) && p.type?.startsWith('float')) {
      ctx.addIssue({ code: 'custom', message: 'bitShift/bitMask need an integer type' });
    }
    if ((p.function === 'input' || p.function === 'discrete') && (p.access === 'write' || p.access === 'readWrite')) {
      ctx.addIssue({ code: 'custom', message: `${p.function} points are read-only` });
    }
    if (p.min !== undefined && p.max !== undefined && p.min > p.max) ctx.addIssue({ code: 'custom', message: 'min > max' });
    const last = p.address + (p.channels - 1) * (p.channelStride ?? (bits ? 1 : registerCount(p.type ?? 'uint16')));
    if (last + (bits ? 0 : registerCount(p.type ?? 'uint16') - 1) > 0xffff) {
      ctx.addIssue({ code: 'custom', message: 'point runs past address 65535' });
    }
  });

export type ProfilePoint = z.infer<typeof pointSchema>;

export const profileSchema = z
  .strictObject({
    /** kebab-case id; equals the file name for built-ins. */
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
    description: z.string().optional(),
    manufacturer: z.string().optional(),
    /** What the device is, for docs and `wattshift probe`. */
    kind: z.enum(['meter', 'relay', 'charger', 'heater', 'other']),
    /** Factory settings, informative: the bus config decides. */
    defaults: z
      .strictObject({
        unitId: z.int().min(0).max(255).optional(),
        baudRate: z.int().positive().optional(),
        parity: z.enum(['none', 'even', 'odd']).optional(),
        dataBits: z.int().min(5).max(8).optional(),
        stopBits: z.union([z.literal(1), z.literal(2)]).optional(),
        tcpPort: z.int().min(1).max(65535).optional(),
      })
      .optional(),
    /** Largest number of registers one read may ask for. */
    maxRegistersPerRead: z.int().min(1).max(125).default(60),
    /**
     * Device-side lease for a relay: a holding register (point `relayLeaseS`) that releases the
     * coil when its countdown ends. Without it a Modbus relay holds its state until told otherwise.
     */
    relayLease: z.strictObject({ point: z.string(), maxS: z.int().min(1).max(0xffff) }).optional(),
    /**
     * What a charger does by itself when wattshift stops talking to it: after `afterS` without a
     * read or heartbeat it falls to `currentA` (openWB's secondary mode: 0 A after 80 s). At 0 A
     * it holds any cap with wattshift gone, and charges again only when wattshift returns.
     */
    commLoss: z.strictObject({ afterS: z.number().positive(), currentA: z.number().min(0) }).optional(),
    /** A watchdog register the daemon must write every `everyS` (e.g. Vestel 6000); fed by `jobs/heartbeats.ts`. */
    heartbeat: z.strictObject({ point: z.string(), value: z.number().finite(), everyS: z.number().positive() }).optional(),
    points: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/), pointSchema),
  })
  .superRefine((p, ctx) => {
    for (const ref of [p.relayLease?.point, p.heartbeat?.point]) {
      if (ref !== undefined && !(ref in p.points)) ctx.addIssue({ code: 'custom', message: `unknown point ${ref}` });
    }
    const relay = p.points['relay'];
    if (relay && relay.function !== 'coil') {
      ctx.addIssue({ code: 'custom', message: 'the relay point must be a coil' });
    }
  });

export type ModbusProfile = z.infer<typeof profileSchema>;
