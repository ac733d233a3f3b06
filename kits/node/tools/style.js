'use strict';
// A small style gate for the Node workers (no linter is installed from npm for it):
// strict mode, no var, lines of at most 120 columns, no tabs or trailing blanks.
// Usage: node tools/style.js FILE...; exits 1 naming every line that fails.

const fs = require('node:fs');

const MAX_COLUMNS = 120;
const problems = [];
for (const file of process.argv.slice(2)) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  if (!lines.slice(0, 3).some((l) => l === "'use strict';")) problems.push(`${file}:1: no 'use strict'`);
  lines.forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    if (line.length > MAX_COLUMNS) problems.push(`${where}: ${line.length} columns (at most ${MAX_COLUMNS})`);
    if (/\t/.test(line)) problems.push(`${where}: a tab`);
    if (/\s$/.test(line)) problems.push(`${where}: trailing blank`);
    if (/^\s*var\s/.test(line)) problems.push(`${where}: var (use const or let)`);
  });
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
