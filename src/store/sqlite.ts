/**
 * better-sqlite3, loaded with require(). It is CommonJS and stays outside the bundle (native
 * addon); an ES `import` of it would make Node scan its source for export names with a WebAssembly
 * lexer that no other module needs, about 0.5 MB of RSS kept for the process's life.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
export type Database = BetterSqlite3.Database;
