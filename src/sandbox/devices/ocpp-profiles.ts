/**
 * The simulated charge point's charging profiles, as OCPP 1.6 (edition 2) specifies them:
 * §3.13.1 purposes (ChargePointMaxProfile, TxDefaultProfile, TxProfile), §3.13.2 stacking (the
 * valid profile with the highest stack level wins), §3.13.3 combining (a TxProfile overrules the
 * TxDefaultProfile; ChargePointMaxProfile caps both), §7.8 ChargingProfile (validFrom/validTo,
 * kinds Absolute/Relative/Recurring), §7.13/§7.14 ChargingSchedule and its periods, with a
 * period's optional `numberPhases` ("the number of phases that can be used for charging";
 * 3 when absent). Amperes only (the charge point's ChargingScheduleAllowedChargingRateUnit is
 * `Current`, §9.4).
 */
export interface ChargingProfile {
  chargingProfileId: number;
  transactionId?: number;
  stackLevel: number;
  chargingProfilePurpose: 'ChargePointMaxProfile' | 'TxDefaultProfile' | 'TxProfile';
  chargingProfileKind: 'Absolute' | 'Recurring' | 'Relative';
  recurrencyKind?: 'Daily' | 'Weekly';
  validFrom?: string;
  validTo?: string;
  chargingSchedule: {
    duration?: number;
    startSchedule?: string;
    chargingRateUnit: 'A' | 'W';
    chargingSchedulePeriod: { startPeriod: number; limit: number; numberPhases?: number }[];
  };
}

export interface StoredProfile {
  connectorId: number;
  profile: ChargingProfile;
}

type Period = ChargingProfile['chargingSchedule']['chargingSchedulePeriod'][number];

/** The limit a profile sets at `nowMs`, or undefined when it is not in force then. */
export function profileLimitAt(p: ChargingProfile, nowMs: number, txStartMs: number | undefined): number | undefined {
  return profilePeriodAt(p, nowMs, txStartMs)?.limit;
}

/** The schedule period of a profile in force at `nowMs`, or undefined when it is not in force then. */
function profilePeriodAt(p: ChargingProfile, nowMs: number, txStartMs: number | undefined): Period | undefined {
  if (p.validFrom !== undefined && Date.parse(p.validFrom) > nowMs) return undefined;
  if (p.validTo !== undefined && Date.parse(p.validTo) <= nowMs) return undefined;
  const s = p.chargingSchedule;
  let startMs: number;
  if (p.chargingProfileKind === 'Relative') {
    if (txStartMs === undefined) return undefined;
    startMs = txStartMs;
  } else {
    startMs = s.startSchedule !== undefined ? Date.parse(s.startSchedule) : nowMs;
    if (p.chargingProfileKind === 'Recurring') {
      const periodMs = (p.recurrencyKind === 'Weekly' ? 7 : 1) * 86_400_000;
      startMs += Math.floor((nowMs - startMs) / periodMs) * periodMs;
    }
  }
  const elapsedS = (nowMs - startMs) / 1000;
  if (elapsedS < 0 || (s.duration !== undefined && elapsedS >= s.duration)) return undefined;
  let found: Period | undefined;
  for (const period of s.chargingSchedulePeriod) if (period.startPeriod <= elapsedS) found = period;
  return found;
}

/** The winner among profiles of one purpose: highest stack level in force (§3.13.2). */
function stacked(profiles: readonly StoredProfile[], nowMs: number, txStartMs: number | undefined): Period | undefined {
  let best: { level: number; period: Period } | undefined;
  for (const { profile } of profiles) {
    const period = profilePeriodAt(profile, nowMs, txStartMs);
    if (period !== undefined && (!best || profile.stackLevel > best.level)) best = { level: profile.stackLevel, period };
  }
  return best?.period;
}

/** The current limit on `connectorId`, A, or undefined when no profile limits it. */
export function activeLimitA(
  profiles: readonly StoredProfile[],
  connectorId: number,
  nowMs: number,
  tx: { id: number; startMs: number } | undefined,
): number | undefined {
  return activePeriod(profiles, connectorId, nowMs, tx).limitA;
}

/** The phases the profiles in force allow on `connectorId` (the governing period's `numberPhases`; 3 when absent). */
export function activeNumberPhases(
  profiles: readonly StoredProfile[],
  connectorId: number,
  nowMs: number,
  tx: { id: number; startMs: number } | undefined,
): number {
  return activePeriod(profiles, connectorId, nowMs, tx).numberPhases ?? 3;
}

function activePeriod(
  profiles: readonly StoredProfile[],
  connectorId: number,
  nowMs: number,
  tx: { id: number; startMs: number } | undefined,
): { limitA: number | undefined; numberPhases: number | undefined } {
  const of = (purpose: ChargingProfile['chargingProfilePurpose'], connectors: number[]): StoredProfile[] =>
    profiles.filter((s) => s.profile.chargingProfilePurpose === purpose && connectors.includes(s.connectorId));
  const txLimit = tx
    ? stacked(
        of('TxProfile', [connectorId]).filter((s) => s.profile.transactionId === undefined || s.profile.transactionId === tx.id),
        nowMs,
        tx.startMs,
      )
    : undefined;
  // A default for this connector overrules one for all connectors (connectorId 0).
  const defaultLimit = stacked(of('TxDefaultProfile', [connectorId]), nowMs, tx?.startMs) ?? stacked(of('TxDefaultProfile', [0]), nowMs, tx?.startMs);
  const maxLimit = stacked(of('ChargePointMaxProfile', [0]), nowMs, tx?.startMs);
  const governing = txLimit ?? defaultLimit;
  const limit = governing?.limit;
  const numberPhases = governing?.numberPhases;
  if (limit === undefined) return { limitA: maxLimit?.limit, numberPhases: maxLimit?.numberPhases };
  return { limitA: maxLimit === undefined ? limit : Math.min(limit, maxLimit.limit), numberPhases };
}

/** The next instant after `nowMs` when a profile begins or ends its validity (for the simulation's steps). */
export function nextProfileChangeMs(profiles: readonly StoredProfile[], nowMs: number): number | undefined {
  let next: number | undefined;
  for (const { profile } of profiles) {
    for (const at of [profile.validFrom, profile.validTo]) {
      const ms = at === undefined ? NaN : Date.parse(at);
      if (ms > nowMs && (next === undefined || ms < next)) next = ms;
    }
  }
  return next;
}
