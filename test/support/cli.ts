/** Runs the real `gatelog` command in a child process. */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const GATELOG_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/gatelog.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A child that has not ended after 120 s hangs; a loaded machine can take a minute to start one. */
export function runGatelog(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [GATELOG_BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs a `gatelog` command with --json that must succeed: what it printed, parsed. */
export async function runGatelogJson(args: string[], env: Record<string, string>) {
  const res = await runGatelog([...args, '--json'], env);
  assert.equal(res.code, 0, res.stderr);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON and assert its shape
  return JSON.parse(res.stdout) as any;
}

/** Runs a `gatelog` command that must fail: exit code 1, nothing on stdout, `message` on stderr. */
export async function assertGatelogFails(args: string[], env: Record<string, string>, message: RegExp) {
  const res = await runGatelog(args, env);
  assert.equal(res.code, 1, `${args.join(' ')}: ${res.stdout}`);
  assert.equal(res.stdout, '');
  assert.match(res.stderr, message);
}

/**
 * Starts `gatelog serve` and resolves once it logs that it listens (that line too); the caller stops it.
 * `onOutput` is given everything it prints, on stdout and stderr, from its start to its end. One process
 * unless `env` (GATELOG_WORKERS) or `args` (--workers N) ask for workers: the tests written for one
 * process stay one, whatever the machine's cores.
 */
export function spawnServer(
  env: Record<string, string>,
  onOutput?: (text: string) => void,
  args: readonly string[] = [],
): Promise<{ child: ChildProcess; baseUrl: string; startLine: string }> {
  const child = spawn(process.execPath, [GATELOG_BIN, 'serve', ...args], {
    // 'info' at least: the "listening" line is how the caller learns the port.
    env: {
      PATH: process.env.PATH ?? '',
      GATELOG_WORKERS: '1',
      ...env,
      GATELOG_LOG_LEVEL: ['debug', 'trace'].includes(env.GATELOG_LOG_LEVEL ?? '') ? env.GATELOG_LOG_LEVEL : 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (onOutput) {
    child.stdout?.on('data', (c: Buffer) => onOutput(c.toString()));
    child.stderr?.on('data', (c: Buffer) => onOutput(c.toString()));
  }
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gatelog serve did not start within 60 s: ${out}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /"msg":"(gatelog listening at (http:\/\/[^ "]+)[^"]*)"/.exec(out);
      if (match) {
        clearTimeout(timer);
        // Keep draining the output so that a chatty server never blocks on a full pipe.
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({ child, baseUrl: match[2], startLine: match[1] });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => reject(new Error(`gatelog serve exited with ${code}: ${out}`)));
  });
}

export function waitForExit(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** Stops `gatelog serve` processes (SIGTERM: a graceful shutdown) and waits until each has exited. */
export async function stopServers(servers: readonly { child: ChildProcess }[]): Promise<void> {
  for (const server of servers) server.child.kill('SIGTERM');
  await Promise.all(servers.map((server) => waitForExit(server.child)));
}
