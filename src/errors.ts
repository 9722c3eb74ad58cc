/**
 * One error type for the whole daemon. Codes are stable: they appear in logs, in status output
 * and in docs/errors.md, and a retired code is never reused for another meaning.
 */
export const errorCodes = {
  CONFIG_INVALID: { retryable: false, hint: 'fix the config file; run `wattshift check`' },
  CONFIG_SECRET_UNREADABLE: { retryable: false, hint: 'check the secret file, environment variable or systemd credential' },
  AUTH_REJECTED: { retryable: false, hint: 'the API rejected the client credentials: check spark.clientId, the client secret and spark.authUrl' },
  API_UNAVAILABLE: { retryable: true, hint: 'network error, timeout, 429 or 5xx from the API; retried with backoff' },
  API_BAD_RESPONSE: { retryable: false, hint: 'the API answered with a body that does not match the contract' },
  PRICE_SOURCES_DISAGREE: {
    retryable: false,
    hint: "the forecast service's actual day-ahead prices and Nord Pool's published ones differ for some hours (both are the same auction result): the plan keeps the order set by prices.nordPool.use; check site.priceArea and the currency, and which source is right for the hour named",
  },
  WEATHER_NO_CONTACT: {
    retryable: false,
    hint: "MET Norway's forecast is not asked without a contact in its User-Agent (its terms of service): set weather.contact to an email address or URL, or weather.enabled: false",
  },
  WEATHER_BLOCKED: {
    retryable: false,
    hint: 'MET Norway answered 403 (blocked, or the User-Agent refused): no more requests until a restart or a config change; check weather.contact and weather.url, and api.met.no/doc/TermsOfService',
  },
  WEATHER_DEPRECATED: {
    retryable: false,
    hint: 'MET Norway answered 203: the Locationforecast version in weather.url is deprecated and will end; the forecast is still used (see api.met.no/doc/StatusCodes)',
  },
  API_NOT_FOUND: { retryable: false, hint: 'the API does not know the requested id' },
  API_CONFLICT: { retryable: false, hint: 'the API reports a conflict (409)' },
  API_REJECTED: { retryable: false, hint: 'the API rejected the request (4xx); its message is kept' },
  WEBHOOK_SIGNATURE_INVALID: { retryable: false, hint: 'a webhook call had a missing or wrong X-Payload-Signature' },
  WEBHOOK_BODY_INVALID: { retryable: false, hint: 'a webhook call had a malformed body' },
  HTTP_REQUEST_INVALID: {
    retryable: false,
    hint: 'a client of a local HTTP listener (status page, webhook) sent an unparsable request line, target or headers, sent its body too slowly, or opened more connections than its address may hold: answered 4xx or closed; `kind` says which',
  },
  PRICE_UNITS_MIXED: { retryable: false, hint: 'prices in different currencies with no exchange rate configured' },
  PLAN_INPUT_INVALID: { retryable: false, hint: 'the planner was given inputs it cannot use' },
  PLAN_WORKER_FAILED: {
    retryable: false,
    hint: 'the planner thread is missing, died or outgrew its heap; that plan is made on the main thread and the next starts a new thread (after 3 failures in a row, all plans stay on the main thread)',
  },
  PART_NOT_INSTALLED: {
    retryable: false,
    hint: 'this install lacks the bundle of that command (dist/hub.js or dist/sim.js): install the package that carries it (wattshift-hub or wattshift-sim), or run it from a checkout after `npm run build`',
  },
  DEVICE_TIMEOUT: { retryable: true, hint: 'a device did not answer in time' },
  DEVICE_UNREACHABLE: { retryable: true, hint: 'a device or its bus/broker cannot be reached' },
  DEVICE_BAD_VALUE: { retryable: true, hint: 'a device answered with an impossible or malformed value' },
  VEHICLE_UNKNOWN: {
    retryable: false,
    hint: "a charger named a car by an id tag or RFID card that no vehicle of the charger claims (vehicles[].identify): the session is planned with the charger's own model and its energy is reported for the charger only; add the tag or card to the car",
  },
  DEVICE_STALE: { retryable: true, hint: 'a device value is older than its allowed age' },
  DEVICE_PROFILE_INVALID: { retryable: false, hint: 'a device profile or register map is invalid' },
  DEVICE_REJECTED: {
    retryable: false,
    hint: 'a device refused a request (Modbus exception: illegal function/address/value); check the profile and unit id',
  },
  TASMOTA_RULE_REFUSED: {
    retryable: false,
    hint: 'a Tasmota device configured with switch.releaseRule answered Unknown or Error to Rule<x> or RuleTimer<x> (a build without rules): the heater is not blocked, since the block would have no timer on the device; use a build with rules (the standard builds have them) or remove releaseRule',
  },
  MQTT_UNAVAILABLE: { retryable: true, hint: 'the MQTT broker cannot be reached' },
  MQTT_AUTH_REJECTED: { retryable: false, hint: 'the MQTT broker refused the login: check mqtt.username, mqtt.password and mqtt.clientId' },
  MQTT_TLS_FAILED: {
    retryable: false,
    hint: 'TLS to the MQTT broker failed: check mqtt.ca (the CA file), the broker certificate and its host name in mqtt.url',
  },
  MQTT_COMMAND_INVALID: { retryable: false, hint: 'an MQTT command was malformed or out of range' },
  MQTT_MESSAGE_TOO_LARGE: {
    retryable: false,
    hint: 'the broker sent a message over the size limit (mqtt.maxPacketBytes, or a command over 4 KiB); it was refused unread. Limit the broker too (Mosquitto 2: max_packet_size)',
  },
  OCPP_AUTH_REJECTED: {
    retryable: false,
    hint: "an OCPP charge point was refused at connect: unknown charge point id, or a missing or wrong password (Security Profile 1/2 basic auth); check the charger's central system URL, id and password against the evCharger config",
  },
  OCPP_CALL_FAILED: {
    retryable: true,
    hint: 'an OCPP charge point refused or failed a request (Rejected, NotSupported or a CALLERROR): check that it supports Smart Charging and remote start',
  },
  OCPP_LISTEN_FAILED: {
    retryable: true,
    hint: "the OCPP central system could not listen on ocpp.host:ocpp.port (the port is taken, or the address is not this host's): its chargers stay unreachable at their safe behaviour and it tries again every minute; free the port or change ocpp.port",
  },
  OCPP_LIMIT_REFUSED: {
    retryable: true,
    hint: 'an OCPP charge point refused a lower charging limit (SetChargingProfile Rejected): wattshift stopped the session (RemoteStopTransaction), since a limit it cannot set must not leave the car drawing more; a refused higher limit leaves the lower one in force; no new session is started for 5 minutes, doubling up to 2 hours while it keeps refusing',
  },
  CONTROL_TICK_SLOW: {
    retryable: true,
    hint: "reading every device took longer than one control tick (the slowest device is named): the tick ran late and decided on readings older than a tick, the main fuse's phase currents among them. A device or bus that answers slowly (a Modbus gateway, a Wi-Fi relay) or an overloaded gateway; check the named device, its bus timeout, and the host's load",
  },
  OCPP_DEFAULT_REFUSED: {
    retryable: true,
    hint: "an OCPP charge point refused the default limit wattshift keeps for a session the charger starts by itself (a TxDefaultProfile at stack level 1, leased): such a session begins at the charger's safe default until wattshift sets its limit at the next tick; sessions wattshift starts are not affected",
  },
  OCPP_CAP_REFUSED: {
    retryable: true,
    hint: "an OCPP charge point refused the cap as its own limit for the cap's window (a ChargePointMaxProfile with validTo): the cap holds while wattshift runs, and it is no longer promised for the case wattshift is gone; check the charger's Smart Charging support",
  },
  LPC_DEVICE_UNHEARD: {
    retryable: false,
    hint: "an LPC event's target depends on a device that had not answered since wattshift started (a charge point still reconnecting, a relay offline): the answer waited up to ten minutes, never past the event's start, and then declined that target; the cap is still kept while wattshift runs. Check the named device's connection",
  },
  OCPP_CHARGER_UNCONTROLLED: {
    retryable: true,
    hint: "an OCPP charge point refused both a lower limit and the remote stop: wattshift cannot bring its current down and retries every control tick; check the charger's Smart Charging support and its local settings, and its own current limit",
  },
  OCPP_BAD_MESSAGE: {
    retryable: false,
    hint: 'an OCPP charge point sent a malformed or invalid frame; it was answered with a CALLERROR and ignored',
  },
  OCPP_REQUEST_REFUSED: {
    retryable: false,
    hint: "a request on the OCPP port was not a charge point's WebSocket upgrade (not GET /<path>/<chargePointId> in origin form, a bad percent-escape, missing or odd Sec-WebSocket-* headers, no ocpp1.6 subprotocol, malformed HTTP), or a connection could not be accepted: it was answered 4xx and closed; logged a few times a minute at most",
  },
  OCPP_FRAME_TOO_LARGE: {
    retryable: false,
    hint: 'an OCPP charge point sent a WebSocket message over 256 KiB: its connection was closed (1009) before the message was read; the charge point reconnects. Check its firmware if it repeats',
  },
  OCPP_CHARGER_FAULTED: {
    retryable: true,
    hint: "the OCPP charge point reports the connector Faulted (StatusNotification); see the charger's own error code",
  },
  FUSE_PHASES_UNKNOWN: {
    retryable: true,
    hint: 'the main fuse guard has no usable per-phase current for a line the charger loads (the HAN reader silent for site.fuse.staleAfterS, or its lists lack that phase, as IT meters without I2 do): the charger is held at its safeCurrentA until the meter gives the phase again',
  },
  FUSE_LIMIT: {
    retryable: true,
    hint: "the house load on a phase leaves less than the charger wants under the main fuse (site.fuse): the charger's current is lowered, and raised again once the phase has stayed below for site.fuse.raiseAfterS; stale phase currents hold it at its safe current",
  },
  PHASE_SWITCH_UNCONFIRMED: {
    retryable: true,
    hint: "the charger did not report the new phase count (go-e `pnp`) within 2 minutes of a phase switch (model.phaseSwitching): wattshift charges on the phases it reports and switches again no sooner than minIntervalS; check the charger's own minimum toggle wait (go-e `mptwt`) and that it publishes `pnp`",
  },
  MQTT_COMMAND_LIMITED: { retryable: true, hint: 'MQTT commands for one device came faster than the rate limit; the extra ones were refused' },
  EVENT_OUT_OF_RANGE: {
    retryable: false,
    hint: 'an event carried values outside physical bounds (non-finite or absurd prices, negative or huge caps, far-off timestamps, too many points); it is stored and refused, never planned',
  },
  STORE_FAILED: { retryable: true, hint: 'a database read or write failed (disk full? read-only?)' },
  STORE_OPEN_FAILED: { retryable: false, hint: 'the database cannot be opened (missing or read-only directory)' },
  STORE_CORRUPT: {
    retryable: false,
    hint: 'the database failed its integrity check: at start it is moved aside as <file>.corrupt.<time> and a new one is created (its events, energy history and registration are lost: run `wattshift register` again); found while running, restart the service',
  },
  STORE_SCHEMA_NEWER: { retryable: false, hint: 'the database was written by a newer wattshift; upgrade or restore a backup' },
  REPORT_REJECTED: { retryable: false, hint: 'the API rejected a usage report; its reason is kept in the outbox' },
  REPORT_DEADLINE_NEAR: { retryable: false, hint: "a report is still unsent close to the month-end deadline (a gateway's outbox, or the hub's)" },
  FLEET_BROKER_DOWN: {
    retryable: true,
    hint: "the partner's fleet broker (upstream.brokerUrl) cannot be reached: events wait in the broker session, reports stay in the outbox and are retried, the plan runs on the last prices",
  },
  FLEET_AUTH_REJECTED: {
    retryable: true,
    hint: "the fleet broker refused this gateway's login or TLS: check upstream.username, upstream.password and upstream.ca, or ask the partner whether the gateway's credentials were revoked; retried after a wait that doubles from 5 s up to 5 minutes",
  },
  FLEET_RECEIPT_TIMEOUT: {
    retryable: true,
    hint: 'the hub did not answer a report within upstream.receiptTimeoutS; it is sent again with the same key (the hub uploads each key once)',
  },
  FLEET_REPORT_REJECTED: {
    retryable: false,
    hint: 'the hub refused a report for good (the gateway does not own a location or resource it names, the event did not target its locations, or the API refused it); its reason is kept in the outbox',
  },
  FLEET_MESSAGE_INVALID: {
    retryable: false,
    hint: 'a message on a fleet topic (event, advice, receipt, report, sync) did not match the fleet wire (src/fleet/wire.ts) or came on an unexpected topic; it was dropped. Hub and gateway versions may differ',
  },
  FLEET_NO_ADVICE: {
    retryable: true,
    hint: 'the hub has not published the price advice of this price area yet (retained on its advice topic); the plan runs on the last prices',
  },
  FLEET_CURRENCY_MISMATCH: {
    retryable: false,
    hint: "the hub publishes hourly prices in another currency than site.currency; the gateway plans on the advice alone. Set the hub's advice.currency to the fleet's currency",
  },
  METER_DISCONTINUITY: {
    retryable: false,
    hint: 'an energy counter went down or rose faster than the device can draw (reset, meter exchange or a garbled read); that interval is left out of the hourly energy, which is marked partial',
  },
  CLOCK_JUMP: {
    retryable: false,
    hint: 'the wall clock stepped (NTP correction?); after a step back metering goes on from the new time and the energy across the step is left out of the hours',
  },
  SG_LOCK_REFUSED: {
    retryable: false,
    hint: 'wattshift wanted to lock a heat pump (SG Ready "1:0") and did not: the lock budget of devices.<id>.block (minutes per lock, locks and minutes per day, the gap between locks) is spent; the pump stays in normal operation and its comfort floor is kept',
  },
  HOUR_GUARD: {
    retryable: false,
    hint: "the hourly energy guard throttled a device (the car first, then the heater) so the hour stays within the allowance the plan holds it to for the month's capacity step; the comfort floor, safe states and the user's mode are never throttled",
  },
  ZONE_FROST_FLOOR: {
    retryable: false,
    hint: 'a heated zone fell below its frost floor (devices.<id>.frostC): its relay is allowed whatever the plan, the price or a cap says until the room is above it again; check the heater, an open window, or a cap that kept it off',
  },
  FLEET_REPORT_FORBIDDEN: {
    retryable: false,
    hint: 'a gateway sent a report naming a location or resource it does not own, or for an event that did not target its locations (or the gateway is unknown or revoked); the hub refused it with a rejected receipt and never uploads it. Check the hub registry (locations, resources) for that gateway',
  },
  HUB_TEXT_NUL_REPLACED: {
    retryable: false,
    hint: "an API event or a gateway's report held a NUL character (U+0000), which PostgreSQL cannot store as text or jsonb; the hub kept it with each NUL replaced by U+FFFD",
  },
  HUB_TEXT_SURROGATE_REPLACED: {
    retryable: false,
    hint: "an API event or a gateway's report held a lone UTF-16 surrogate (half of a pair, such as the JSON escape \\ud800), which PostgreSQL refuses in jsonb; the hub kept it with each replaced by U+FFFD",
  },
  HUB_EVENT_POLL_STUCK: {
    retryable: true,
    hint: "the hub's GET /events poll has not completed for three poll intervals (at least 15 minutes); /healthz fails. The log says why each poll failed (API_* or STORE_FAILED codes)",
  },
  APP_LISTENER_FAILED: {
    retryable: false,
    hint: "a listener on the daemon's event bus threw; the event still reached the other listeners (the log names the event)",
  },
  INTERNAL: { retryable: false, hint: 'a bug: please report it with the log' },
} as const satisfies Record<string, { retryable: boolean; hint: string }>;

export type ErrorCode = keyof typeof errorCodes;

export interface WattshiftErrorOptions {
  cause?: unknown;
  /** Overrides the code's default. */
  retryable?: boolean;
  /** Structured context for logs (never secrets). */
  details?: Record<string, unknown>;
}

export class WattshiftError extends Error {
  override readonly name = 'WattshiftError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: WattshiftErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? errorCodes[code].retryable;
    this.details = options.details;
  }
}

export function isWattshiftError(err: unknown, code?: ErrorCode): err is WattshiftError {
  return err instanceof WattshiftError && (code === undefined || err.code === code);
}

/** The stable code of anything thrown: its own when it is ours, else `fallback`. */
export function codeOf(err: unknown, fallback: ErrorCode = 'INTERNAL'): ErrorCode {
  return err instanceof WattshiftError ? err.code : fallback;
}

export function isRetryable(err: unknown): boolean {
  return err instanceof WattshiftError ? err.retryable : false;
}

/** Wraps anything thrown into a WattshiftError, keeping an existing one as it is. */
export function toWattshiftError(err: unknown, code: ErrorCode, message: string): WattshiftError {
  if (err instanceof WattshiftError) return err;
  return new WattshiftError(code, `${message}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

/**
 * What a log line carries of an error: an expected, retryable failure (a network or device
 * outage) is its message and its cause's, without a stack, which says nothing a user can act on;
 * anything else keeps its stack for whoever reports the bug.
 */
export function loggedError(err: unknown): unknown {
  if (!isRetryable(err)) return err;
  const e = err as WattshiftError;
  const cause = e.cause instanceof Error ? e.cause.message : undefined;
  return cause !== undefined && !e.message.includes(cause) ? `${e.message} (${cause})` : e.message;
}
