// The docs cannot go stale where a list can be checked: README stays a door (≤ 200
// lines) whose links resolve; README and docs/widgets.md name exactly the elements web/widgets.js
// registers; docs/api.md's export table names exactly the module's exports; every docs/*.md link to
// a file in this repository resolves.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (f) => readFileSync(join(ROOT, f), 'utf8');
const between = (text, begin, end) => text.slice(text.indexOf(begin) + begin.length, text.indexOf(end));
const codeNames = (text) => [...text.matchAll(/`([A-Za-z_][\w-]*)`/g)].map((m) => m[1]);

// The element names of web/widgets.js's ELEMENTS table (the only place tags are defined).
function registeredElements() {
  const src = read('web/widgets.js');
  const table = between(src, 'export const ELEMENTS = {', '};');
  return [...table.matchAll(/'([a-z]+(?:-[a-z]+)+)':/g)].map((m) => m[1]);
}

describe('docs that cannot go stale', () => {
  it('README is a door: at most 200 lines, and every relative link resolves', () => {
    const readme = read('README.md');
    assert.ok(readme.split('\n').length <= 200, `README has ${readme.split('\n').length} lines`);
    for (const [, target] of readme.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)) {
      if (/^https?:/.test(target)) continue;
      assert.ok(existsSync(join(ROOT, target)), `README links to ${target}, which does not exist`);
    }
  });

  it('README and docs/widgets.md name exactly the registered widgets', () => {
    const elements = registeredElements();
    assert.ok(elements.length >= 14, `${elements.length} elements found in web/widgets.js`);
    const listed = codeNames(between(read('README.md'), '<!-- widgets:begin', '<!-- widgets:end -->'));
    assert.deepEqual([...listed].sort(), [...elements].sort());
    const widgetsDoc = read('docs/widgets.md');
    for (const name of elements)
      assert.ok(widgetsDoc.includes(`## \`<${name}>\``), `docs/widgets.md has no section for <${name}>`);
    const widgetFiles = readdirSync(join(ROOT, 'web', 'widgets'), { recursive: true }).filter((f) =>
      f.endsWith('.js'),
    );
    assert.ok(widgetFiles.length > 50, 'the widget modules, in their folders');
    for (const f of widgetFiles) {
      assert.ok(
        !/customElements\.define/.test(read(`web/widgets/${f}`)),
        `web/widgets/${f} registers its own tag: register it in web/widgets.js`,
      );
    }
  });

  it("docs/api.md's export table names exactly the module's exports", async () => {
    const api = between(read('docs/api.md'), '<!-- exports:begin -->', '<!-- exports:end -->');
    const rows = api
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| area') && !l.startsWith('|---'));
    // The second column's names, minus method names given in parentheses.
    const listed = rows.flatMap((r) => codeNames(r.split('|')[2].replace(/\([^)]*\)/g, '')));
    const exported = Object.keys(await import('../../src/js/index.js'));
    assert.deepEqual([...new Set(listed)].sort(), [...exported].sort());
  });

  it('every link from docs/*.md and CONTRIBUTING.md to a repository file resolves', () => {
    const files = [
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
      'CONTRIBUTING.md',
    ];
    for (const f of files) {
      for (const [, target] of read(f).matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        if (/^(https?|mailto):/.test(target)) continue;
        assert.ok(
          existsSync(join(ROOT, dirname(f), target)),
          `${f} links to ${target}, which does not exist`,
        );
      }
    }
  });
});
