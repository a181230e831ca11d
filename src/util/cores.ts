/**
 * The cores this process may use: what the scheduler lets it run on (os.availableParallelism), fewer
 * when its cgroup's CPU quota says so — a container started with `--cpus 2` on a 64-core host is given
 * 2 cores' time, which Node 20's count does not know (its libuv reads the CPU affinity only).
 */
import fs from 'node:fs';
import os from 'node:os';

/** cgroup v2's cpu.max ("200000 100000": a quota of 2 cores; "max 100000": none) as whole cores, or null. */
export function coresOfCpuMax(text: string): number | null {
  const [quota, period] = text.trim().split(/\s+/);
  const q = Number(quota);
  const p = Number(period);
  if (quota === 'max' || !Number.isFinite(q) || !Number.isFinite(p) || q <= 0 || p <= 0) return null;
  return Math.max(1, Math.ceil(q / p));
}

/** cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us (-1: no quota), as whole cores, or null. */
function coresOfCfs(): number | null {
  try {
    const quota = fs.readFileSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us', 'utf8');
    const period = fs.readFileSync('/sys/fs/cgroup/cpu/cpu.cfs_period_us', 'utf8');
    return coresOfCpuMax(`${quota.trim()} ${period.trim()}`);
  } catch {
    return null;
  }
}

function cgroupCores(): number | null {
  try {
    return coresOfCpuMax(fs.readFileSync('/sys/fs/cgroup/cpu.max', 'utf8'));
  } catch {
    return coresOfCfs();
  }
}

export function usableCores(): number {
  const available = os.availableParallelism();
  const quota = process.platform === 'linux' ? cgroupCores() : null;
  return quota === null ? available : Math.min(available, quota);
}
