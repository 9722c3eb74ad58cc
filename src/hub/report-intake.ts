/**
 * Reports from gateways: the sending gateway is the one in the topic (the broker's ACL lets a
 * gateway write only its own report topic), it must own every location and resource the report
 * names, and the report's event must be one the hub received for at least one of its locations;
 * otherwise the report is refused for good with a `rejected` receipt and an
 * FLEET_REPORT_FORBIDDEN log line. An accepted report goes into the outbox once per key; a copy
 * of a key already answered gets the stored receipt again.
 */
import { fleetReportSchema, fleetWireVersion, type FleetReceipt } from '../fleet/wire.js';
import { rateLimitedWarn } from '../log-limit.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { ReportRequest } from '../spark/wire.js';
import type { OutboxStore } from './outbox-store.js';
import { storable, warnReplaced } from './pg-text.js';
import type { RegistryStore } from './registry-store.js';

/** The locations and resources a report names. */
export function reportSubjects(report: ReportRequest): { locationIds: string[]; resourceIds: string[] } {
  const locations = new Set<string>();
  const resources = new Set<string>();
  for (const p of report.payloads) {
    if (p.payloadType === 'EnergyUsage') {
      resources.add(p.resourceId);
      if (p.locationId) locations.add(p.locationId);
    } else if (p.payloadType === 'LocationEnergyUsage' || p.payloadType === 'LocationEnergyUsagePlan') {
      locations.add(p.locationId);
    } else {
      for (const t of [...(p.acknowledgedTargets ?? []), ...(p.declinedTargets ?? [])]) {
        locations.add(t.locationId);
        if ('resourceId' in t && typeof t.resourceId === 'string') resources.add(t.resourceId);
      }
    }
  }
  return { locationIds: [...locations], resourceIds: [...resources] };
}

export type ReportOutcome = 'queued' | 'duplicate' | 'refused' | 'invalid';

export function createReportIntake(deps: {
  registry: RegistryStore;
  outbox: OutboxStore;
  /** Sends a receipt to the gateway. */
  sendReceipt: (gatewayId: string, receipt: FleetReceipt) => Promise<void>;
  /** A new report is due: wake the outbox worker. */
  onQueued: () => void;
  clock: Clock;
  logger: Logger;
}) {
  const log = deps.logger.child({ component: 'hub-reports' });
  // What a gateway sends is hostile input: a flood of bad reports is a few lines a minute.
  const warn = rateLimitedWarn(log, { now: () => deps.clock.nowMs() });
  return {
    async accept(gatewayId: string, payload: Buffer): Promise<ReportOutcome> {
      let report;
      try {
        report = fleetReportSchema.parse(JSON.parse(payload.toString('utf8')));
      } catch (err) {
        warn('FLEET_MESSAGE_INVALID', { gatewayId, err: err instanceof Error ? err.message : String(err) }, 'report dropped: not a fleet report');
        return 'invalid';
      }
      const { value: clean, ...replaced } = storable(report);
      report = clean;
      warnReplaced(warn, replaced, 'report', { gatewayId, idempotencyKey: report.idempotencyKey });
      const key = report.idempotencyKey;
      const subjects = reportSubjects(report.report);
      const owned = await deps.registry.ownership(gatewayId, report.report.eventId ?? '', subjects.locationIds, subjects.resourceIds);
      const foreign = owned.foreignLocations.length > 0 || owned.foreignResources.length > 0;
      let refusal: FleetReceipt | undefined;
      if (!owned.knownGateway || owned.revoked || foreign || !owned.eventTargetsGateway) {
        const why = !owned.knownGateway
          ? 'unknown gateway'
          : owned.revoked
            ? 'gateway revoked'
            : foreign
              ? 'names locations or resources of another gateway'
              : `event ${report.report.eventId} did not target this gateway's locations`;
        log.error(
          {
            code: 'FLEET_REPORT_FORBIDDEN',
            gatewayId,
            idempotencyKey: key,
            eventId: report.report.eventId,
            foreignLocations: owned.foreignLocations,
            foreignResources: owned.foreignResources,
          },
          `report refused: ${why}`,
        );
        const names = [...owned.foreignLocations.map((l) => `location ${l}`), ...owned.foreignResources.map((r) => `resource ${r}`)];
        refusal = {
          v: fleetWireVersion,
          idempotencyKey: key,
          status: 'rejected',
          reason: `FLEET_REPORT_FORBIDDEN: ${why}${names.length ? `: ${names.join(', ')}` : ''}`.slice(0, 500),
          atMs: deps.clock.nowMs(),
        };
      }
      const { created, row } = await deps.outbox.insert(key, gatewayId, report.report, refusal);
      if (row.receipt) await deps.sendReceipt(gatewayId, row.receipt);
      if (!created) return 'duplicate';
      if (refusal) return 'refused';
      deps.onQueued();
      return 'queued';
    },
  };
}

export type ReportIntake = ReturnType<typeof createReportIntake>;
