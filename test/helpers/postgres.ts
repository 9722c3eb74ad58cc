/**
 * A throwaway PostgreSQL cluster for tests against a real database: Debian's server binaries
 * (`/usr/lib/postgresql/<version>/bin`, package `postgresql`), `initdb` into a temp dir and
 * `pg_ctl` on a free loopback port, trust authentication, no fsync. PostgreSQL refuses to run as
 * root, so under root (CI) the cluster runs as the `postgres` OS user, which owns the temp dir.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './mosquitto.js';

const root = '/usr/lib/postgresql';

/** The newest installed server's bin directory, or undefined when the package is missing. */
export function postgresBinDir(): string | undefined {
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** Whether the PostgreSQL tests can run here; on CI (`CI` set) they always run, and fail without it. */
export function postgresAvailable(): boolean {
  return postgresBinDir() !== undefined || Boolean(process.env.CI);
}

export interface PostgresCluster {
  port: number;
  /** `postgres://` URL of the database `name` (default: `postgres`). */
  url(name?: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (immediate mode) and removes its files. */
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-pg-'));
  const user = asRoot ? 'postgres' : userInfo().username;
  if (asRoot) {
    const { uid, gid } = pgIds();
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]): void => {
    const command = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    execFileSync(command, argv, { stdio: 'pipe', cwd: dir });
  };
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', user, '--auth=trust', '-E', 'UTF8', '--no-instructions']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
  const url = (name = 'postgres'): string => `postgres://${user}@127.0.0.1:${port}/${name}`;
  return {
    port,
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function pgIds(): { uid: number; gid: number } {
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}
