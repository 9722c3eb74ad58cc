// Types of the undici modules `src/spark/undici-parts.ts` imports one by one (undici ships types
// for its index only); each is the same object the index exports.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}
declare module 'undici/lib/dispatcher/proxy-agent.js' {
  import type { ProxyAgent } from 'undici';
  const ProxyAgentClass: typeof ProxyAgent;
  export default ProxyAgentClass;
}
declare module 'undici/lib/interceptor/retry.js' {
  import type { interceptors } from 'undici';
  const retry: typeof interceptors.retry;
  export default retry;
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  export default request;
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  import type { Dispatcher } from 'undici';
  const DispatcherClass: typeof Dispatcher;
  export default DispatcherClass;
}
declare module 'undici/lib/api/api-connect.js' {
  import type { Dispatcher } from 'undici';
  const connect: Dispatcher['connect'];
  export default connect;
}
