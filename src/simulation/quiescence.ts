/**
 * Whether everything in this process has stopped moving: the test of "idle" the virtual clock
 * waits for before it moves time. Every peer of a simulated home (the daemon, the broker, the
 * simulators, the API sandbox) lives in this process and talks over loopback sockets, so a message
 * in flight is a byte one end wrote that its peer has not read yet, and a request in flight is a
 * libuv request still open (a connect, a DNS lookup, a file operation). Both are visible from here
 * without touching any library: Node publishes every TCP socket it creates on the documented
 * diagnostics channels `net.client.socket` and `net.server.socket`, and lists open requests in
 * `process.getActiveResourcesInfo()`.
 *
 * What it cannot see is a library's own short real-time timer (a `setTimeout(fn, 5)` inside a
 * dependency); the kernel's tests show none of the peers it runs relies on one in a way that
 * matters.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

/**
 * Open libuv requests that mean work is under way (handles such as sockets and timers are not
 * work), and immediates still to run: the kernel checks from a continuation of its own immediate,
 * so any listed is someone else's next step.
 */
const workInFlight = /(Req|ReqWrap|ReqCallback|ReqPromise|ConnectWrap|WriteWrap|ShutdownWrap|^Immediate)$/;
/** Each resource name's verdict, once: the list is read every turn and holds a few dozen names. */
const isWorkByName = new Map<string, boolean>();
const isWork = (name: string): boolean => {
  let work = isWorkByName.get(name);
  if (work === undefined) isWorkByName.set(name, (work = workInFlight.test(name)));
  return work;
};

/** Consecutive quiet turns of the event loop that count as idle (each turn polls I/O once). */
const quietTurns = 3;

/** Real time that outlasts a library's zero-delay timer (Node runs `setTimeout(fn, 0)` after 1 ms). */
const shortTimerMs = 2;

/** A turn of the event loop: the check phase after a poll for I/O. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Tracked {
  socket: Socket;
  /** This end's and its peer's ports, once connected. */
  local?: number;
  remote?: number;
  /** The other end, once both ends are known (looked up once: the check runs every turn). */
  peer?: Tracked;
}

export interface Quiescence {
  /** Bytes written in this process and not yet read by their peer in this process. */
  bytesInFlight(): number;
  /** Whether a message or a request is in flight now. */
  busy(): boolean;
  /** Resolves once the process has been idle for a few turns of the event loop. Counts the turns it took. */
  settle(): Promise<number>;
  /** Settles so far, the event-loop turns they took, and how many waited out a real-time timer. */
  stats(): { settles: number; turns: number; timerWaits: number };
  /** Adds work Node cannot show (a peer's own count of requests it is still handling). */
  alsoBusyWhile(busy: () => boolean): void;
  /** Stops watching sockets. */
  close(): void;
}

/** Watches the sockets created from now on. */
export function watchQuiescence(): Quiescence {
  const otherWork: (() => boolean)[] = [];
  const extraBusy = (): boolean => otherWork.some((busy) => busy());
  const tracked = new Set<Tracked>();
  const byPorts = new Map<string, Tracked>();
  /** The ends with a known peer, as a list: the check runs every turn and walks only these. */
  let paired: Tracked[] | null = null;
  const pairedEnds = (): Tracked[] => (paired ??= [...tracked].filter((t) => t.peer !== undefined));
  const key = (local: number, remote: number): string => `${local}>${remote}`;

  const remember = (t: Tracked): void => {
    const s = t.socket;
    if (s.localPort === undefined || s.remotePort === undefined) return;
    t.local = s.localPort;
    t.remote = s.remotePort;
    byPorts.set(key(t.local, t.remote), t);
    const peer = byPorts.get(key(t.remote, t.local));
    if (peer) {
      t.peer = peer;
      peer.peer = t;
      paired = null;
    }
  };
  const forget = (x: Tracked): void => {
    tracked.delete(x);
    paired = null;
    if (x.local !== undefined) byPorts.delete(key(x.local, x.remote!));
  };
  const track = (socket: Socket): void => {
    // Nagle's algorithm holds a small write back until the peer acknowledges the last one, and the
    // peer may delay that acknowledgement by up to 40 ms: on loopback every byte goes at once.
    socket.setNoDelay(true);
    const t: Tracked = { socket };
    tracked.add(t);
    if (socket.remotePort !== undefined) remember(t);
    else socket.once('connect', () => remember(t));
    // A closed end stays known while its peer lives: what it wrote last may still be unread there.
    socket.once('close', () => {
      const peer = t.peer;
      if (peer && !peer.socket.destroyed) return;
      forget(t);
      if (peer) forget(peer);
    });
  };
  const onSocket = (message: unknown): void => {
    const socket = (message as { socket?: Socket }).socket;
    if (socket) track(socket);
  };
  subscribe('net.client.socket', onSocket);
  subscribe('net.server.socket', onSocket);

  const bytesInFlight = (): number => {
    let inFlight = 0;
    for (const t of pairedEnds()) {
      if (t.socket.destroyed) continue;
      inFlight += Math.max(0, t.peer!.socket.bytesWritten - t.socket.bytesRead);
    }
    return inFlight;
  };
  /** Whether any byte is in flight: stops at the first end with unread bytes. */
  const anyInFlight = (): boolean => {
    for (const t of pairedEnds()) if (!t.socket.destroyed && t.peer!.socket.bytesWritten > t.socket.bytesRead) return true;
    return false;
  };
  const bytesRead = (): number => {
    let n = 0;
    for (const t of tracked) n += t.socket.bytesRead;
    return n;
  };
  const busy = (): boolean => anyInFlight() || extraBusy() || process.getActiveResourcesInfo().some(isWork);
  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  /** Ref'd real-time timers standing when the process was last idle: long-lived ones (keepalives, deadlines). */
  let standingTimers = timers();

  const counts = { settles: 0, turns: 0, timerWaits: 0 };
  const quiet = async (): Promise<number> => {
    let quietFor = 0;
    let turns = 0;
    while (quietFor < quietTurns) {
      await nextTurn();
      turns++;
      quietFor = busy() ? 0 : quietFor + 1;
    }
    return turns;
  };

  return {
    bytesInFlight,
    busy,
    async settle() {
      let turns = await quiet();
      // A real-time timer set since the last idle moment may be a library's short one (modbus-serial's
      // server parses each request on a zero-delay timer): let real time pass it, until what still
      // stands has outlived a wait with nothing read meanwhile: long-lived timers.
      let standing = timers();
      while (standing > standingTimers) {
        counts.timerWaits++;
        const readBefore = bytesRead();
        await new Promise((resolve) => setTimeout(resolve, shortTimerMs));
        turns += await quiet();
        const now = timers();
        if (now === standing && bytesRead() === readBefore) break;
        standing = now;
      }
      standingTimers = standing;
      counts.settles++;
      counts.turns += turns;
      return turns;
    },
    stats: () => ({ ...counts }),
    alsoBusyWhile(busy) {
      otherWork.push(busy);
    },
    close() {
      unsubscribe('net.client.socket', onSocket);
      unsubscribe('net.server.socket', onSocket);
      tracked.clear();
      byPorts.clear();
      paired = null;
    },
  };
}
