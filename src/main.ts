#!/usr/bin/env node
/** The process shell: argv, exit codes and last-resort error handling. Commands live in src/cli/. */
import { runCli } from './cli/dispatch.js';
import { formatError } from './cli/format-error.js';

process.on('uncaughtException', (err) => {
  for (const line of formatError(err)) console.error(line);
  if (err instanceof Error && err.stack) console.error(err.stack);
  process.exit(1);
});
process.on('unhandledRejection', (reason) => {
  for (const line of formatError(reason)) console.error(line);
  if (reason instanceof Error && reason.stack) console.error(reason.stack);
  process.exit(1);
});

const code = await runCli(process.argv.slice(2), {
  stdout: (line) => console.log(line),
  stderr: (line) => console.error(line),
  env: process.env,
  signals: process,
});
process.exit(code);
