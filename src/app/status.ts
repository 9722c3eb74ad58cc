/** The local status page, `/healthz` and Prometheus `/metrics`. */
import { moduleOf, type Module } from '../lifecycle.js';
import type { HomeView } from '../view/model.js';
import { startStatusServer } from '../status/server.js';
import { cachedEnergyHistory, readEnergyHistory } from '../status/history.js';
import { allowedPageHosts } from '../status/page-url.js';
import type { Store } from '../store/types.js';
import type { AppContext } from './context.js';

export function statusModule(ctx: AppContext, needs: { store: Store; view: () => HomeView }): Module {
  const { config, deps, log, counters } = ctx;
  return moduleOf('status', async () => {
    if (!config.http.enabled) return null;
    const { store: s, view } = needs;
    const status = await startStatusServer({
      host: config.http.host,
      port: config.http.port,
      getView: view,
      getHistory: cachedEnergyHistory((nowMs) => readEnergyHistory(s, config, nowMs)),
      metrics: counters,
      timezone: config.site.timezone,
      logger: deps.logger,
      allowedHosts: allowedPageHosts(config.http),
    });
    log.info({ url: status.url }, 'status page');
    return { stop: () => status.close() };
  });
}
