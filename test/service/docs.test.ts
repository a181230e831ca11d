/** docs/api.md, the users' reference, names every route gatelog serves and no route it does not. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startApp } from '../support/harness.js';
import { servedRoutes } from '../support/routes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** "METHOD /path/{param}" for every row of the reference's route table (trailing slashes dropped, but `/` kept). */
function documentedRoutes(doc: string): Set<string> {
  const table = doc.slice(doc.indexOf('## Every route'));
  const routes = new Set<string>();
  for (const match of table.matchAll(/^\|\s*`(\/[^`]*)`\s*\|\s*([A-Z, ]+)/gm)) {
    const route = match[1].replace(/(.)\/$/, '$1');
    for (const method of match[2].split(',').map((m) => m.trim())) routes.add(`${method} ${route}`);
  }
  return routes;
}

describe('the API reference', () => {
  it('lists exactly the routes gatelog serves', async () => {
    const t = await startApp();
    try {
      const served = servedRoutes(t.app.printRoutes({ commonPrefix: false }));
      const documented = documentedRoutes(fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8'));
      assert.ok(served.size > 10, `parsed ${served.size} routes`);
      assert.deepEqual([...documented].sort(), [...served].sort());
    } finally {
      await t.close();
    }
  });

  it('names every section in its contents, in order', () => {
    const guide = fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8');
    const sections = [...guide.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    const contents = /^Contents: (.+)$/m.exec(guide)?.[1] ?? '';
    const listed = [...contents.matchAll(/\[([^\]]+)\]\(#[^)]+\)/g)].map((m) => m[1]);
    assert.ok(sections.length > 20, `parsed ${sections.length} sections`);
    assert.deepEqual(listed, sections);
  });

  it('is what the README and the code point readers to: no internal documents are cited', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    assert.match(readme, /docs\/api\.md/);
    const cited: string[] = [];
    const visit = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        // Installed packages (the coding agents' under test/agents/tools) are not ours.
        if (entry.isDirectory()) {
          if (entry.name !== 'node_modules') visit(file);
        } else if (/\.(ts|md|mjs)$/.test(entry.name) && /CONTRACT|SPEC\.md|SPEC\b/.test(fs.readFileSync(file, 'utf8')))
          cited.push(path.relative(ROOT, file));
      }
    };
    for (const dir of ['src', 'test', 'bench', 'scripts', 'docs']) visit(path.join(ROOT, dir));
    // This file names what it looks for.
    cited.splice(cited.indexOf(path.join('test', 'service/docs.test.ts')), 1);
    for (const file of ['README.md', 'DEVELOPERS.md']) {
      if (/CONTRACT|SPEC\.md|SPEC\b/.test(fs.readFileSync(path.join(ROOT, file), 'utf8'))) cited.push(file);
    }
    assert.deepEqual(cited, []);
  });
});
