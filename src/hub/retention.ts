/**
 * Keeps the hub's database from growing for ever: settled reports (accepted or refused) and events
 * that ended more than `keepDays` ago are deleted. Pending reports are never touched, nor the event
 * a pending report belongs to. A gateway sends a report again only until it has its receipt (days,
 * not months), so the settled row a resend would find is kept far longer than it can be needed.
 */
import type pg from 'pg';

export async function pruneHub(pool: pg.Pool, keepDays: number): Promise<{ reports: number; events: number }> {
  const reports = await pool.query(`DELETE FROM report_outbox WHERE state <> 'pending' AND created_at < now() - make_interval(days => $1)`, [
    keepDays,
  ]);
  const events = await pool.query(
    `DELETE FROM events e WHERE coalesce(e.ends_at, e.received_at) < now() - make_interval(days => $1)
       AND NOT EXISTS (SELECT 1 FROM report_outbox o WHERE o.state = 'pending' AND o.body->>'eventId' = e.event_id)`,
    [keepDays],
  );
  return { reports: reports.rowCount ?? 0, events: events.rowCount ?? 0 };
}
