/**
 * The provider kinds a gatelog knows (kind.ts), one entry each, in order: the first is the kind of a
 * provider registered without one under a name that is no kind's. The proxied routes, the credentials
 * area, the CLI and the web UI (GET /api/provider-kinds/) all read it. The built-in registry lists
 * gatelog's own kinds; whoever builds the app may pass another (buildApp's `providerKinds`), made with
 * `BUILT_IN_PROVIDER_KINDS.with(kind)`.
 */
import { z } from 'zod';
import { AppError } from '../errors.js';
import { zodToAppError } from '../util/validation.js';
import { anthropicKind } from './anthropic/index.js';
import { azureKind } from './azure/index.js';
import type { ProviderKindDefinition, ProviderRoute } from './kind.js';
import { openaiKind } from './openai/index.js';

/** A kind's name: what `kind` says; also a provider name, so the same characters. */
const KIND_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** An option's name: a field of the API's body (snake_case) and a flag of the CLI (`api_version`: `--api-version`). */
const OPTION_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** The fields every provider has in the API, which an option (a field beside them) cannot be named. */
const PROVIDER_FIELDS = new Set([
  'provider',
  'api_key',
  'base_url',
  'kind',
  'models',
  'key_id',
  'weight',
  'api_key_preview',
  'keys',
  'created_at',
  'updated_at',
]);

/** One option's schema as JSON Schema, which two kinds sharing the option's name must agree on. */
const jsonSchemaOf = (field: z.ZodType) => JSON.stringify(z.toJSONSchema(z.object({ f: field }), { io: 'input' }));

export class ProviderRegistry {
  private readonly byName = new Map<string, ProviderKindDefinition>();
  /** The kinds each route calls, asked on every proxied call. */
  private readonly byRoute = new Map<ProviderRoute, string[]>();
  /** Every kind's options by name: a registration and a provider's view hold them as fields of their own. */
  private readonly fields = new Map<string, { schema: z.ZodType; kinds: ProviderKindDefinition[] }>();

  constructor(readonly kinds: readonly ProviderKindDefinition[]) {
    if (kinds.length === 0) throw new Error('a provider registry needs at least one kind');
    for (const kind of kinds) {
      if (!KIND_NAME.test(kind.name)) throw new Error(`provider kind '${kind.name}': not a valid name`);
      if (this.byName.has(kind.name)) throw new Error(`provider kind '${kind.name}' is listed twice`);
      this.byName.set(kind.name, kind);
      for (const [name, schema] of Object.entries(kind.options.shape) as [string, z.ZodType][]) {
        if (!OPTION_NAME.test(name) || PROVIDER_FIELDS.has(name)) {
          throw new Error(`provider kind '${kind.name}': '${name}' cannot name an option`);
        }
        const known = this.fields.get(name);
        if (known === undefined) {
          this.fields.set(name, { schema, kinds: [kind] });
        } else if (jsonSchemaOf(known.schema) !== jsonSchemaOf(schema)) {
          // The API takes options as top-level fields: one name, one meaning.
          throw new Error(`provider kinds '${known.kinds[0].name}' and '${kind.name}' define option '${name}' apart`);
        } else {
          known.kinds.push(kind);
        }
      }
    }
  }

  /** This registry and these kinds after its own. */
  with(...kinds: readonly ProviderKindDefinition[]): ProviderRegistry {
    return new ProviderRegistry([...this.kinds, ...kinds]);
  }

  get names(): string[] {
    return this.kinds.map((k) => k.name);
  }

  /** The kind of a provider registered without one under a name that is no kind's. */
  get defaultKind(): string {
    return this.kinds[0].name;
  }

  /** The kind of a provider registered without one: its name when that is a kind, else the default kind. */
  defaultKindFor(provider: string): string {
    return this.byName.has(provider) ? provider : this.defaultKind;
  }

  get(name: string): ProviderKindDefinition | undefined {
    return this.byName.get(name);
  }

  /**
   * The kind of a registered provider. One this gatelog no longer knows (an app built without it) makes
   * the provider's calls a 400 naming its kind, not a failure of every call of its organization.
   */
  kindOf(provider: { name: string; kind: string }, param: string | null = 'model'): ProviderKindDefinition {
    const kind = this.byName.get(provider.kind);
    if (kind !== undefined) return kind;
    throw new AppError(
      400,
      'provider_not_supported',
      `Provider '${provider.name}' is of kind '${provider.kind}', which this gatelog does not know; ` +
        `its kinds are ${this.names.join(', ')}.`,
      param,
    );
  }

  /** The kind named and its provider of the same name, when that name alone names a provider (openai, anthropic). */
  builtInProvider(name: string): ProviderKindDefinition | null {
    const kind = this.byName.get(name);
    return kind !== undefined && kind.defaultBaseUrl !== null ? kind : null;
  }

  /** The kinds whose model families hold `model`, in order. */
  familiesOf(model: string): ProviderKindDefinition[] {
    return this.kinds.filter((k) => k.families.some((f) => f.test(model)));
  }

  /** The kinds a proxied route calls, in order. */
  serving(route: ProviderRoute): readonly string[] {
    let names = this.byRoute.get(route);
    if (names === undefined) {
      names = this.kinds.filter((k) => k.routes.includes(route)).map((k) => k.name);
      this.byRoute.set(route, names);
    }
    return names;
  }

  /** Every kind's option fields with the schema they share, and the kinds that have them. */
  get optionFields(): ReadonlyMap<
    string,
    { readonly schema: z.ZodType; readonly kinds: readonly ProviderKindDefinition[] }
  > {
    return this.fields;
  }

  /**
   * A registration's options as `kind` takes them: `given` holds every option field of the body (null:
   * not given). A field of another kind's, or a value the kind's schema refuses, is a 400 naming the field.
   */
  parseOptions(kind: ProviderKindDefinition, given: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const own = kind.options.shape;
    const present: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(given)) {
      if (value === null || value === undefined) continue;
      if (!Object.hasOwn(own, field)) {
        const whose = (this.fields.get(field)?.kinds ?? []).map((k) => `${k.label} (kind ${k.name})`).join(', ');
        throw new AppError(
          400,
          'invalid_field',
          `${field} is for ${whose || 'no'} providers only; this one is of kind ${kind.name}.`,
          field,
        );
      }
      present[field] = value;
    }
    const parsed = kind.options.safeParse(present);
    if (!parsed.success) throw zodToAppError(parsed.error);
    return parsed.data;
  }
}

/** gatelog's own kinds; openai first, the kind of a provider named as none. */
export const BUILT_IN_PROVIDER_KINDS = new ProviderRegistry([openaiKind, anthropicKind, azureKind]);
