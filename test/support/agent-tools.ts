/**
 * The real coding agents the tests of test/agents drive: Claude Code and Codex, pinned in
 * test/agents/tools/package.json. They ship native binaries (about 800 MB together), so they are
 * installed there by the first test that needs them, never by gatelog's own `npm install`.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);

/** test/agents/tools in the source tree (this file runs from dist/test/support). */
export const AGENT_TOOLS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/agents/tools');

export interface AgentBinaries {
  claude: string;
  codex: string;
}

/** The agents' executables, installed first when missing (`npm ci` from the pinned lock file). */
export async function agentBinaries(): Promise<AgentBinaries> {
  const bin = path.join(AGENT_TOOLS_DIR, 'node_modules', '.bin');
  const binaries = { claude: path.join(bin, 'claude'), codex: path.join(bin, 'codex') };
  if (!Object.values(binaries).every((file) => fs.existsSync(file))) {
    // npm's own lock keeps two installs from mixing; the test files using this run one at a time.
    await run('npm', ['ci', '--no-audit', '--no-fund', '--prefix', AGENT_TOOLS_DIR], {
      maxBuffer: 16 * 1024 * 1024,
    });
  }
  return binaries;
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an agent to its end (stdin closed, no terminal), with `env` as its whole environment beside PATH. */
export function runAgent(
  file: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (piece: string) => (stdout += piece));
    child.stderr.setEncoding('utf8').on('data', (piece: string) => (stderr += piece));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
