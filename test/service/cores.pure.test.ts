/** The cores `serve` starts workers for by default: a cgroup's CPU quota counts (src/util/cores.ts). */
import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { coresOfCpuMax, usableCores } from '../../src/util/cores.js';

describe('usable cores', () => {
  it("reads a cgroup's CPU quota as whole cores, none as null", () => {
    assert.equal(coresOfCpuMax('200000 100000\n'), 2);
    assert.equal(coresOfCpuMax('150000 100000'), 2, 'a part of a core is a core');
    assert.equal(coresOfCpuMax('50000 100000'), 1);
    assert.equal(coresOfCpuMax('max 100000\n'), null);
    assert.equal(coresOfCpuMax('-1 100000'), null, "cgroup v1's no quota");
    assert.equal(coresOfCpuMax(''), null);
  });

  it('never counts more than the scheduler allows, nor fewer than one', () => {
    const cores = usableCores();
    assert.ok(cores >= 1 && cores <= os.availableParallelism(), String(cores));
  });
});
