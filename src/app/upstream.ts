/** Events, prices and report uploads: the API itself or the partner's hub (src/upstream/). */
import type { Part } from '../lifecycle.js';
import { createUpstream, type Upstream } from '../upstream/index.js';
import type { AppContext } from './context.js';

export function upstreamModule(ctx: AppContext): Part<Upstream> {
  const { config, deps, clock } = ctx;
  let made: Upstream | undefined;
  return {
    name: 'upstream',
    async start() {
      const up = createUpstream(config, { clock, logger: deps.logger, checkCredentials: deps.checkCredentials !== false });
      made = up;
      await up.open();
      return up;
    },
    stop: async () => {
      await made?.close().catch(() => undefined);
    },
  };
}
