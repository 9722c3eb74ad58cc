import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostAllowed } from './host-check.js';
import { guardClientErrors, refusalLog } from '../http/client-errors.js';
import { parseRequestTarget } from '../http/request-target.js';
import { codeOf, WattshiftError } from '../errors.js';
import type { HomeView } from '../view/model.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { assertTimezone } from './format.js';
import type { DaemonMetrics } from './metrics.js';
import { renderStatusPage } from './page.js';
import type { EnergyHistory } from './history.js';
import { renderHistorySection } from './history-page.js';

export interface StatusServerOptions {
  /** Loopback by default: the page has no authentication. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  getView: () => HomeView;
  metrics: Pick<DaemonMetrics, 'render' | 'contentType'>;
  /** IANA timezone for times on the page; UTC by default. */
  timezone?: string;
  logger?: Logger;
  /** The energy history at the view's now (history.ts); without it the page has no History section. */
  getHistory?: (nowMs: number) => EnergyHistory;
  /** Host names (besides IP literals and `localhost`) the page and `/api/view` answer to. */
  allowedHosts?: readonly string[];
}

export interface StatusServer {
  /** `http://host:port` */
  url: string;
  port: number;
  close(): Promise<void>;
}

const securityHeaders = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // No scripts at all; inline styles only (the SVG carries its own <style>).
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** `/healthz` body: what fails, with the job's last error. */
export function healthBody(view: HomeView): { status: 'ok' | 'failing'; failing: unknown[] } {
  const failing = view.health.jobs
    .filter((j) => !j.ok)
    .map((j) => ({
      job: j.name,
      ...(j.lastError ? { error: { code: j.lastError.code, message: j.lastError.message, at: new Date(j.lastError.atMs).toISOString() } } : {}),
    }));
  return { status: view.health.ok && failing.length === 0 ? 'ok' : 'failing', failing };
}

/**
 * The local status server: `/healthz` (200, or 503 with the failing jobs), `/metrics`
 * (Prometheus text), `/` (status page with the plan as SVG), `/api/view` (the view as JSON).
 */
export async function startStatusServer(options: StatusServerOptions): Promise<StatusServer> {
  const host = options.host ?? '127.0.0.1';
  const timezone = options.timezone ?? 'UTC';
  assertTimezone(timezone);
  const log = (options.logger ?? silentLogger()).child({ component: 'status-server' });
  const refused = refusalLog(log);

  function send(res: ServerResponse, status: number, type: string, body: string, head: boolean, extra: Record<string, string> = {}): void {
    res.writeHead(status, { ...securityHeaders, 'content-type': type, 'content-length': Buffer.byteLength(body), ...extra });
    res.end(head ? undefined : body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      send(res, 405, 'application/json', JSON.stringify({ error: 'method not allowed' }), false, { allow: 'GET, HEAD' });
      return;
    }
    const target = parseRequestTarget(req.url);
    if (target === null) {
      refused('bad-target');
      send(res, 400, 'application/json', JSON.stringify({ error: 'bad request target' }), head, { connection: 'close' });
      return;
    }
    const path = target.path;
    // An absolute-form target names the host itself, in place of the Host header.
    if (path !== '/healthz' && !hostAllowed(target.authority ?? req.headers.host, options.allowedHosts ?? [])) {
      send(res, 421, 'application/json', JSON.stringify({ error: 'unknown host name: add it to http.allowedHosts' }), head);
      return;
    }
    switch (path) {
      case '/healthz': {
        const body = healthBody(options.getView());
        send(res, body.status === 'ok' ? 200 : 503, 'application/json', JSON.stringify(body), head);
        return;
      }
      case '/metrics':
        send(res, 200, options.metrics.contentType, await options.metrics.render(options.getView()), head);
        return;
      case '/api/view':
        send(res, 200, 'application/json', JSON.stringify(options.getView()), head);
        return;
      case '/api/history': {
        if (!options.getHistory) {
          send(res, 404, 'application/json', JSON.stringify({ error: 'no history here' }), head);
          return;
        }
        try {
          send(res, 200, 'application/json', JSON.stringify(options.getHistory(options.getView().nowMs)), head);
        } catch (err) {
          const code = codeOf(err);
          log.warn({ code, err }, 'energy history not readable');
          send(res, 503, 'application/json', JSON.stringify({ error: 'history not readable', code }), head);
        }
        return;
      }
      case '/': {
        const view = options.getView();
        const historyHtml = options.getHistory ? historySection(options.getHistory, view.nowMs) : undefined;
        send(res, 200, 'text/html; charset=utf-8', renderStatusPage(view, { timezone, ...(historyHtml === undefined ? {} : { historyHtml }) }), head);
        return;
      }
      default:
        send(res, 404, 'application/json', JSON.stringify({ error: 'not found' }), head);
    }
  }

  /** The page still renders when the history cannot be read: the section says why, the log has the code. */
  function historySection(getHistory: (nowMs: number) => EnergyHistory, nowMs: number): string {
    try {
      return renderHistorySection(getHistory(nowMs));
    } catch (err) {
      const code = codeOf(err);
      log.warn({ code, err }, 'energy history not readable; the page is shown without it');
      return renderHistorySection(null, `${code}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  const server = createServer((req, res) => {
    // The last guard: a request must never become the process's unhandled rejection.
    handle(req, res).catch((err: unknown) => {
      log.error({ code: 'INTERNAL', err, path: req.url?.slice(0, 200) }, 'status request failed');
      if (!res.headersSent) send(res, 500, 'application/json', JSON.stringify({ error: 'internal error' }), req.method === 'HEAD');
      else res.destroy();
    });
  });
  guardClientErrors(server, refused);
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new WattshiftError('CONFIG_INVALID', `status server cannot listen on ${host}:${options.port}: ${err.message}`, { cause: err })),
    );
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  log.info({ host, port }, 'status server listening');
  return {
    url: `http://${urlHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
