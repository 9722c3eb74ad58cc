/** Events, prices and report uploads: the API itself or the partner's hub (src/upstream/). */
import type { Module } from '../lifecycle.js';
import { createUpstream } from '../upstream/index.js';
import type { AppContext } from './context.js';

export function upstreamModule(ctx: AppContext): Module {
  const { config, deps, clock } = ctx;
  return {
    name: 'upstream',
    async start() {
      const up = createUpstream(config, { clock, logger: deps.logger, checkCredentials: deps.checkCredentials !== false });
      ctx.parts.upstream = up;
      await up.open();
    },
    stop: async () => {
      await ctx.parts.upstream?.close().catch(() => undefined);
    },
  };
}
