// A node:test reporter that writes one line per failed test — "file\tname" — so that a run of many parts
// can end with the list of what failed instead of leaving it hundreds of lines up.
export default async function* failedTests(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A suite fails when a test in it does: the test is the line worth reading.
    if (details?.type === 'suite') continue;
    yield `${file ?? '?'}\t${name}\n`;
  }
}
