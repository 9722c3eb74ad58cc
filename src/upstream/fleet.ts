/**
 * The fleet upstream: the partner's hub holds the API credentials; this gateway holds only its
 * broker login. Events for its location arrive on the location's topic (into the same intake as
 * the poller's), the prices of its area on the area's retained topic (into the price
 * refresh), and each report goes out on the gateway's report topic and counts as accepted only
 * when the hub's receipt for its key comes back. Topics and messages: src/fleet/wire.ts.
 */
import type { Config } from '../config/schema.js';
import type { FleetUpstreamConfig } from '../config/schema-upstream.js';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { z } from 'zod';
import { codeOf, WattshiftError } from '../errors.js';
import {
  fleetAdviceSchema,
  fleetEventSchema,
  fleetReceiptSchema,
  fleetReportSchema,
  fleetTopics,
  fleetWireVersion,
  type FleetAdvice,
  type FleetSync,
} from '../fleet/wire.js';
import { openFleetLink } from './fleet-link.js';
import { fleetPriceSource } from './fleet-prices.js';
import { createReceiptBook } from './fleet-receipts.js';
import type { Upstream, UpstreamSinks } from './port.js';

/** Events that arrive before the daemon's intake exists (a resumed session delivers at once). */
const maxEarlyEvents = 1000;

export function createFleetUpstream(
  config: Config,
  cfg: FleetUpstreamConfig,
  deps: { clock: Clock; logger: Logger; reconnectPeriodMs?: number },
): Upstream {
  const log = deps.logger.child({ component: 'fleet' });
  const topics = fleetTopics(cfg.topicPrefix);
  const area = cfg.priceArea ?? config.site.priceArea;
  const t = {
    events: topics.events(cfg.locationId),
    advice: topics.advice(area),
    receipts: topics.receipts(cfg.gatewayId),
    reports: topics.reports(cfg.gatewayId),
    sync: topics.sync(cfg.gatewayId),
  };
  const receipts = createReceiptBook(deps.clock);
  let advice: FleetAdvice | null = null;
  let sinks: UpstreamSinks | null = null;
  const early: unknown[] = [];
  let link: ReturnType<typeof openFleetLink> | undefined;

  /** Parses a wire message; a bad one is logged with its topic and dropped. */
  function parse<T>(schema: z.ZodType<T>, topic: string, payload: Buffer): T | null {
    let json: unknown;
    try {
      json = JSON.parse(payload.toString('utf8'));
    } catch {
      log.warn({ code: 'FLEET_MESSAGE_INVALID', topic, bytes: payload.length }, 'fleet message is not JSON; dropped');
      sinks?.onRefused('event', 'FLEET_MESSAGE_INVALID');
      return null;
    }
    const r = schema.safeParse(json);
    if (r.success) return r.data;
    const issues = r.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    log.warn({ code: 'FLEET_MESSAGE_INVALID', topic, issues }, 'fleet message does not match the wire; dropped');
    sinks?.onRefused('event', 'FLEET_MESSAGE_INVALID');
    return null;
  }

  function onMessage(topic: string, payload: Buffer): void {
    if (topic === t.events) {
      const m = parse(fleetEventSchema, topic, payload);
      if (!m) return;
      if (sinks) sinks.intake.accept(m.event, 'event');
      else if (early.length < maxEarlyEvents) early.push(m.event);
    } else if (topic === t.advice) {
      const m = parse(fleetAdviceSchema, topic, payload);
      if (!m) return;
      advice = m;
      sinks?.pricesChanged();
    } else if (topic === t.receipts) {
      const m = parse(fleetReceiptSchema, topic, payload);
      if (m && !receipts.settle(m)) log.debug({ key: m.idempotencyKey, status: m.status }, 'receipt kept for a later send of its report');
    } else {
      log.warn({ code: 'FLEET_MESSAGE_INVALID', topic }, 'message on a topic this gateway does not use; dropped');
    }
  }

  function sync(): void {
    const body: FleetSync = { v: fleetWireVersion, requestedAtMs: deps.clock.nowMs() };
    link?.publish(t.sync, body).then(
      () => log.info('asked the hub for the open events of this location'),
      (err: unknown) => log.warn({ code: codeOf(err, 'FLEET_BROKER_DOWN') }, 'sync request not sent; sent again at the next new session'),
    );
  }

  let started = false;
  const need = (): ReturnType<typeof openFleetLink> => {
    if (!link) throw new WattshiftError('INTERNAL', 'fleet upstream used before open()');
    return link;
  };

  return {
    mode: 'fleet',
    eligibility: null,
    prices: fleetPriceSource(() => advice, { priceArea: area, currency: config.site.currency }, deps.logger),
    reports: {
      async postReport(body, signal, meta) {
        const msg = fleetReportSchema.safeParse({
          v: fleetWireVersion,
          idempotencyKey: meta.idempotencyKey,
          createdAtMs: meta.createdAtMs,
          report: body,
        });
        if (!msg.success)
          throw new WattshiftError('FLEET_REPORT_REJECTED', `the report does not match the fleet wire: ${msg.error.issues[0]?.message ?? 'invalid'}`);
        const l = need();
        const receipt = await receipts.await(meta.idempotencyKey, () => l.publish(t.reports, msg.data), cfg.receiptTimeoutS * 1000, signal);
        if (receipt.status === 'rejected') {
          throw new WattshiftError('FLEET_REPORT_REJECTED', `the hub refused the report: ${receipt.reason ?? 'no reason given'}`, {
            details: { key: meta.idempotencyKey },
          });
        }
        return { id: receipt.reportId };
      },
    },
    async open() {
      link = openFleetLink(cfg, {
        clock: deps.clock,
        logger: deps.logger,
        topics: [t.events, t.advice, t.receipts],
        onMessage,
        // At start, and whenever events may have been lost: the broker had no session for us, or
        // the connection ended without our asking (a login that took the session, a restart).
        onConnect: (resync) => {
          if (resync || !started) sync();
          started = true;
        },
        ...(deps.reconnectPeriodMs ? { reconnectPeriodMs: deps.reconnectPeriodMs } : {}),
      });
      await link.waitConnected(AbortSignal.timeout(5_000)).catch((err: unknown) => {
        log.warn({ code: codeOf(err, 'FLEET_BROKER_DOWN') }, 'fleet broker not reachable at start; controlling on stored data and retrying');
      });
    },
    async startEvents(s) {
      sinks = s;
      for (const e of early.splice(0)) s.intake.accept(e, 'event');
      if (advice) s.pricesChanged();
      return {
        wake: sync,
        stop: async () => {
          sinks = null;
        },
      };
    },
    health: () => need().health(),
    async close() {
      await link?.close();
    },
  };
}
