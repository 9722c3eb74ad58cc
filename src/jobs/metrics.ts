import type { MetricsSnapshot } from '../status/metrics.js';

/** Counters since start, for `/metrics` (gauges come from the live view). */
export class Counters {
  private readonly requestErrors = new Map<string, number>();
  private readonly commands = { ok: 0, error: 0 };
  private readonly reports = { sent: 0, rejected: 0, retried: 0 };
  private readonly refusedInputs = new Map<string, number>();

  requestError(target: string, code: string): void {
    const key = `${target}\u0000${code}`;
    this.requestErrors.set(key, (this.requestErrors.get(key) ?? 0) + 1);
  }

  command(ok: boolean): void {
    this.commands[ok ? 'ok' : 'error']++;
  }

  /** Hostile or out-of-range input refused: a webhook call, an MQTT message, an event. */
  refused(input: 'webhook' | 'mqtt' | 'command' | 'event', code: string): void {
    const key = `${input}\u0000${code}`;
    this.refusedInputs.set(key, (this.refusedInputs.get(key) ?? 0) + 1);
  }

  report(outcome: 'sent' | 'rejected' | 'retried', code?: string): void {
    this.reports[outcome]++;
    if (code) this.requestError('api', code);
  }

  snapshot(): MetricsSnapshot {
    return {
      requestErrors: [...this.requestErrors].map(([key, count]) => {
        const [target, code] = key.split('\u0000') as [string, string];
        return { target, code, count };
      }),
      refused: [...this.refusedInputs].map(([key, count]) => {
        const [input, code] = key.split('\u0000') as [string, string];
        return { input, code, count };
      }),
      commands: [{ status: 'ok', count: this.commands.ok }, { status: 'error', count: this.commands.error }],
      reports: [
        { status: 'sent', count: this.reports.sent },
        { status: 'rejected', count: this.reports.rejected },
        { status: 'retried', count: this.reports.retried },
      ],
    };
  }
}
