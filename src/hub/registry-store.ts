/**
 * The hub's registry and event log in PostgreSQL: which gateway serves which locations and
 * resources, and every API event once, with the locations it was sent to.
 */
import type pg from 'pg';
import type { SparkEvent } from '../spark/wire.js';

export interface GatewayRow {
  gatewayId: string;
  brokerUsername: string;
  brokerPasswordHash: string | null;
  priceArea: string | null;
  revoked: boolean;
}

export interface LocationRow {
  locationId: string;
  userId: string;
  priceArea: string;
  meterPointId: string | null;
  gatewayId: string;
}

/**
 * What a gateway may not report on: locations and resources that are not its own, and an event
 * that did not target any of its locations (or that the hub never received).
 */
export interface Ownership {
  revoked: boolean;
  knownGateway: boolean;
  eventTargetsGateway: boolean;
  foreignLocations: string[];
  foreignResources: string[];
}

export function createRegistryStore(pool: pg.Pool) {
  return {
    async upsertGateway(g: Omit<GatewayRow, 'revoked'> & { revoked?: boolean }): Promise<void> {
      await pool.query(
        `INSERT INTO gateways (gateway_id, broker_username, broker_password_hash, price_area, revoked) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (gateway_id) DO UPDATE SET broker_username = EXCLUDED.broker_username,
           broker_password_hash = COALESCE(EXCLUDED.broker_password_hash, gateways.broker_password_hash),
           price_area = EXCLUDED.price_area, revoked = EXCLUDED.revoked`,
        [g.gatewayId, g.brokerUsername, g.brokerPasswordHash, g.priceArea, g.revoked ?? false],
      );
    },
    async setRevoked(gatewayId: string, revoked: boolean): Promise<void> {
      await pool.query('UPDATE gateways SET revoked = $2 WHERE gateway_id = $1', [gatewayId, revoked]);
    },
    async upsertLocation(l: LocationRow, resourceIds: readonly string[] = []): Promise<void> {
      await pool.query(
        `INSERT INTO locations (location_id, user_id, price_area, meter_point_id, gateway_id) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (location_id) DO UPDATE SET user_id = EXCLUDED.user_id, price_area = EXCLUDED.price_area,
           meter_point_id = EXCLUDED.meter_point_id, gateway_id = EXCLUDED.gateway_id`,
        [l.locationId, l.userId, l.priceArea, l.meterPointId, l.gatewayId],
      );
      for (const r of resourceIds) {
        await pool.query(
          'INSERT INTO resources (resource_id, location_id) VALUES ($1, $2) ON CONFLICT (resource_id) DO UPDATE SET location_id = EXCLUDED.location_id',
          [r, l.locationId],
        );
      }
    },
    async gateways(): Promise<GatewayRow[]> {
      const { rows } = await pool.query<{
        gateway_id: string;
        broker_username: string;
        broker_password_hash: string | null;
        price_area: string | null;
        revoked: boolean;
      }>('SELECT gateway_id, broker_username, broker_password_hash, price_area, revoked FROM gateways ORDER BY gateway_id');
      return rows.map((r) => ({
        gatewayId: r.gateway_id,
        brokerUsername: r.broker_username,
        brokerPasswordHash: r.broker_password_hash,
        priceArea: r.price_area,
        revoked: r.revoked,
      }));
    },
    async locations(): Promise<LocationRow[]> {
      const { rows } = await pool.query<{
        location_id: string;
        user_id: string;
        price_area: string;
        meter_point_id: string | null;
        gateway_id: string;
      }>('SELECT location_id, user_id, price_area, meter_point_id, gateway_id FROM locations ORDER BY location_id');
      return rows.map((r) => ({
        locationId: r.location_id,
        userId: r.user_id,
        priceArea: r.price_area,
        meterPointId: r.meter_point_id,
        gatewayId: r.gateway_id,
      }));
    },
    async locationsOfGateway(gatewayId: string): Promise<string[]> {
      const { rows } = await pool.query<{ location_id: string }>('SELECT location_id FROM locations WHERE gateway_id = $1 ORDER BY location_id', [
        gatewayId,
      ]);
      return rows.map((r) => r.location_id);
    },
    /**
     * The registered locations among `locationIds`, and those of the given resources and users;
     * with the location the registry gives each of those resources.
     */
    async resolveLocations(
      locationIds: readonly string[],
      resourceIds: readonly string[],
      userIds: readonly string[],
    ): Promise<{ locationIds: string[]; resourceLocations: Map<string, string> }> {
      const { rows } = await pool.query<{ location_id: string; resource_id: string | null }>(
        `SELECT location_id, NULL AS resource_id FROM locations WHERE location_id = ANY($1) OR user_id = ANY($3)
         UNION ALL SELECT location_id, resource_id FROM resources WHERE resource_id = ANY($2)`,
        [locationIds, resourceIds, userIds],
      );
      const resourceLocations = new Map(rows.flatMap((r) => (r.resource_id === null ? [] : [[r.resource_id, r.location_id] as const])));
      return { locationIds: [...new Set(rows.map((r) => r.location_id))].sort(), resourceLocations };
    },
    async priceAreas(): Promise<string[]> {
      const { rows } = await pool.query<{ price_area: string }>('SELECT DISTINCT price_area FROM locations ORDER BY price_area');
      return rows.map((r) => r.price_area);
    },
    async ownership(gatewayId: string, eventId: string, locationIds: readonly string[], resourceIds: readonly string[]): Promise<Ownership> {
      const gw = await pool.query<{ revoked: boolean; targeted: boolean }>(
        `SELECT revoked, EXISTS (SELECT 1 FROM events e WHERE e.event_id = $2
           AND e.target_location_ids && ARRAY(SELECT location_id FROM locations WHERE gateway_id = $1)) AS targeted
         FROM gateways WHERE gateway_id = $1`,
        [gatewayId, eventId],
      );
      const owned = await pool.query<{ kind: string; id: string }>(
        `SELECT 'location' AS kind, location_id AS id FROM locations WHERE gateway_id = $1 AND location_id = ANY($2)
         UNION ALL SELECT 'resource', r.resource_id FROM resources r JOIN locations l USING (location_id) WHERE l.gateway_id = $1 AND r.resource_id = ANY($3)`,
        [gatewayId, locationIds, resourceIds],
      );
      const mine = new Set(owned.rows.map((r) => `${r.kind}:${r.id}`));
      return {
        knownGateway: gw.rows.length > 0,
        revoked: gw.rows[0]?.revoked ?? false,
        eventTargetsGateway: gw.rows[0]?.targeted ?? false,
        foreignLocations: locationIds.filter((id) => !mine.has(`location:${id}`)),
        foreignResources: resourceIds.filter((id) => !mine.has(`resource:${id}`)),
      };
    },
    /**
     * Stores an event once and takes the duty to publish it: true for the one caller that stored
     * it (or that retries one whose publishing was given back), false for every other copy.
     */
    async saveEvent(event: SparkEvent, endsAtMs: number | null, targetLocationIds: readonly string[]): Promise<boolean> {
      const { rowCount } = await pool.query(
        `INSERT INTO events (event_id, raw, ends_at, target_location_ids, published_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (event_id) DO UPDATE SET published_at = now() WHERE events.published_at IS NULL`,
        [event.id, JSON.stringify(event), endsAtMs === null ? null : new Date(endsAtMs), targetLocationIds],
      );
      return rowCount === 1;
    },
    /** Gives the duty to publish back (publishing failed): the next copy of the event publishes it. */
    async unpublish(eventId: string): Promise<void> {
      await pool.query('UPDATE events SET published_at = NULL WHERE event_id = $1', [eventId]);
    },
    async recentEventIds(limit: number): Promise<string[]> {
      const { rows } = await pool.query<{ event_id: string }>('SELECT event_id FROM events ORDER BY received_at DESC LIMIT $1', [limit]);
      return rows.map((r) => r.event_id);
    },
    /** Events still running at `nowMs` that target a location of the gateway, with those locations. */
    async openEventsOfGateway(gatewayId: string, nowMs: number): Promise<{ event: unknown; receivedAtMs: number; locationIds: string[] }[]> {
      const { rows } = await pool.query<{ raw: unknown; received_at: Date; mine: string[] }>(
        `SELECT e.raw, e.received_at, ARRAY(SELECT unnest(e.target_location_ids) INTERSECT SELECT location_id FROM locations WHERE gateway_id = $1) AS mine
         FROM events e WHERE e.ends_at > $2
           AND e.target_location_ids && ARRAY(SELECT location_id FROM locations WHERE gateway_id = $1)
         ORDER BY e.received_at`,
        [gatewayId, new Date(nowMs)],
      );
      return rows.map((r) => ({ event: r.raw, receivedAtMs: r.received_at.getTime(), locationIds: r.mine }));
    },
  };
}

export type RegistryStore = ReturnType<typeof createRegistryStore>;
