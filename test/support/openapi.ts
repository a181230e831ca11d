/**
 * Validates responses against OpenAI's published schemas (test/fixtures/openai, taken from the
 * openai-openapi repository; see SOURCES.md there).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';

const file = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/fixtures/openai/openai-embeddings-transcription-schemas.yaml',
);
const spec = parse(fs.readFileSync(file, 'utf8')) as { components: { schemas: Record<string, unknown> } };
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: 'openai', components: spec.components });

/** Errors of `value` against components.schemas[name]; an empty list when it conforms. */
export function schemaErrors(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`openai#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`);
}
