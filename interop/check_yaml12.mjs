// Read JSON lines {"text": ...}; write JSON lines {"value": ...} or {"error": ...}:
// each text read as YAML 1.2 with the core schema by the `yaml` package.
import { parseDocument } from 'yaml';
import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const { text } = JSON.parse(line);
  let out;
  try {
    const doc = parseDocument(text, { version: '1.2', schema: 'core', uniqueKeys: true });
    if (doc.errors.length) {
      out = { error: doc.errors[0].message.split('\n')[0] };
    } else {
      const value = doc.toJS();
      out = { value: JSON.parse(JSON.stringify(value, (k, v) =>
        typeof v === 'number' && !Number.isFinite(v) ? { $float: String(v) } : v)) };
    }
  } catch (e) {
    out = { error: String(e.message).split('\n')[0] };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
