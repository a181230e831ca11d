/**
 * The layout of an OTLP/JSON trace export, read by a JSON tokenizer that validates the whole body as
 * JSON.parse would, counts every value and tracks where it is in OTLP's shape (lowerCamelCase names, and
 * the snake_case and older instrumentationLibrary ones the decoder reads too) — without building any of
 * it. JSON.parse then reads each piece kept, one at a time.
 */
import { TimeSlice } from '../util/time-slice.js';
import { OTLP_BOUNDS, noCounts, type PieceCounts } from './otlp-bounds.js';
import { OtlpBodyError } from './otlp-body-error.js';
import { type ExportLayout, LayoutBuilder } from './otlp-layout.js';

/** Where a value sits in an export. */
const enum Role {
  Other,
  Request,
  ResourceSpansList,
  ResourceSpans,
  Resource,
  ScopeSpansList,
  ScopeSpans,
  Scope,
  SpanList,
  Span,
  Attributes,
  KeyValue,
  AnyValue,
  ArrayValue,
  ValueList,
  KvlistValue,
  EventList,
  Event,
  LinkList,
  Link,
}

/** The role of a member, by its object's role and its name. */
const MEMBERS: Partial<Record<Role, Record<string, Role>>> = {
  [Role.Request]: { resourceSpans: Role.ResourceSpansList, resource_spans: Role.ResourceSpansList },
  [Role.ResourceSpans]: {
    resource: Role.Resource,
    scopeSpans: Role.ScopeSpansList,
    scope_spans: Role.ScopeSpansList,
    instrumentationLibrarySpans: Role.ScopeSpansList,
    instrumentation_library_spans: Role.ScopeSpansList,
  },
  [Role.Resource]: { attributes: Role.Attributes },
  [Role.ScopeSpans]: {
    scope: Role.Scope,
    instrumentationLibrary: Role.Scope,
    instrumentation_library: Role.Scope,
    spans: Role.SpanList,
  },
  [Role.Scope]: { attributes: Role.Attributes },
  [Role.Span]: { attributes: Role.Attributes, events: Role.EventList, links: Role.LinkList },
  [Role.Event]: { attributes: Role.Attributes },
  [Role.Link]: { attributes: Role.Attributes },
  [Role.KeyValue]: { value: Role.AnyValue },
  [Role.AnyValue]: {
    arrayValue: Role.ArrayValue,
    array_value: Role.ArrayValue,
    kvlistValue: Role.KvlistValue,
    kvlist_value: Role.KvlistValue,
  },
  [Role.ArrayValue]: { values: Role.ValueList },
  [Role.KvlistValue]: { values: Role.Attributes },
};

/** MEMBERS as bytes, to match a name where it lies in the body without making a string of it. */
const MEMBER_BYTES = new Map<Role, [Buffer, Role][]>(
  Object.entries(MEMBERS).map(([role, names]) => [
    Number(role) as Role,
    Object.entries(names).map(([name, child]) => [Buffer.from(name, 'latin1'), child] as [Buffer, Role]),
  ]),
);

/** The role of an array's elements, by the array's role. */
const ELEMENTS: Partial<Record<Role, Role>> = {
  [Role.ResourceSpansList]: Role.ResourceSpans,
  [Role.ScopeSpansList]: Role.ScopeSpans,
  [Role.SpanList]: Role.Span,
  [Role.Attributes]: Role.KeyValue,
  [Role.ValueList]: Role.AnyValue,
  [Role.EventList]: Role.Event,
  [Role.LinkList]: Role.Link,
};

interface Frame {
  role: Role;
  object: boolean;
  start: number;
  /** The counts of the span, resource or scope this is in. */
  counts: PieceCounts | null;
  /** How deep in attribute values this is (an attribute's own value: 1). */
  depth: number;
  /** The role of the array or object this is in. */
  parent: Role;
  /** Whether the values in it count towards the export's bound: not in a span past the export's bound. */
  counted: boolean;
}

const EMPTY_FRAME: Frame = {
  role: Role.Other,
  object: false,
  start: 0,
  counts: null,
  depth: 0,
  parent: Role.Other,
  counted: true,
};

const enum Expect {
  Value,
  FirstKey,
  Key,
  FirstElement,
  After,
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export function scanJson(body: Buffer): Promise<ExportLayout> {
  return new JsonScan(body).run();
}

/** Values scanned between looks at the clock (TimeSlice). */
const STEPS_PER_LOOK = 4096;

class JsonScan {
  private readonly layout = new LayoutBuilder();
  /** The containers the scan is in: frames[0 .. open), reused as the scan goes in and out. */
  private readonly frames: Frame[] = [];
  private open = 0;
  private pos = 0;
  private expect = Expect.Value;
  private role = Role.Request;

  constructor(private readonly body: Buffer) {}

  async run(): Promise<ExportLayout> {
    const slice = new TimeSlice();
    while (!this.steps(STEPS_PER_LOOK)) await slice.pause();
    return this.layout.finish();
  }

  /** Up to `count` steps of the scan; whether it has ended. */
  private steps(count: number): boolean {
    const body = this.body;
    let expect = this.expect;
    let role = this.role;
    for (let step = 0; step < count; step++) {
      this.skipSpace();
      const top = this.open > 0 ? this.frames[this.open - 1] : undefined;
      if (expect === Expect.After && !top) {
        if (this.pos < body.length) throw this.unexpected();
        return true;
      }
      if (this.pos >= body.length) throw new OtlpBodyError('not JSON: the body ends early');
      const c = body[this.pos]!;
      switch (expect) {
        case Expect.Value:
          expect = this.value(role, top);
          break;
        case Expect.FirstKey:
        case Expect.Key:
          if (expect === Expect.FirstKey && c === 0x7d) {
            this.close(top!);
            expect = Expect.After;
            break;
          }
          role = this.member(top!);
          expect = Expect.Value;
          break;
        case Expect.FirstElement:
          if (c === 0x5d) {
            this.close(top!);
            expect = Expect.After;
            break;
          }
          role = this.element(top!);
          expect = Expect.Value;
          break;
        case Expect.After:
          if (c === 0x2c) {
            this.pos++;
            if (top!.object) expect = Expect.Key;
            else {
              this.skipSpace();
              role = this.element(top!);
              expect = Expect.Value;
            }
          } else if (c === (top!.object ? 0x7d : 0x5d)) {
            this.close(top!);
          } else {
            throw this.unexpected();
          }
          break;
      }
    }
    this.expect = expect;
    this.role = role;
    return false;
  }

  /** A value in `role` starts here: counted, and a container entered. */
  private value(role: Role, parent: Frame | undefined): Expect {
    const c = this.body[this.pos]!;
    let counted = parent?.counted ?? true;
    if (counted) this.layout.countValue();
    const counts = parent?.counts ?? null;
    if (counts) counts.values++;
    if (role === Role.Request && c !== 0x7b) throw new OtlpBodyError('an ExportTraceServiceRequest is an object');
    if (role === Role.Span) {
      // A span past the export's bound is only tokenized (it counts as one value, as in protobuf, where
      // it is skipped whole); one that is not an object is rejected.
      if (!this.layout.takesSpan()) {
        role = Role.Other;
        counted = false;
      } else if (c !== 0x7b) {
        this.layout.notASpan();
        role = Role.Other;
      }
    }
    if (c === 0x7b || c === 0x5b) {
      const object = c === 0x7b;
      if (this.open >= OTLP_BOUNDS.jsonDepth) {
        throw new OtlpBodyError(`it nests deeper than ${OTLP_BOUNDS.jsonDepth} levels`);
      }
      // An object where OTLP has a list, or a list where it has a message, is read as nothing (as the
      // decoder reads it): only scanned.
      const own = (object ? !isList(role) : isList(role)) ? role : Role.Other;
      const depth = (parent?.depth ?? 0) + (own === Role.AnyValue ? 1 : 0);
      if (own === Role.AnyValue) this.layout.checkDepth(depth);
      const frame = (this.frames[this.open++] ??= { ...EMPTY_FRAME });
      frame.role = own;
      frame.object = object;
      frame.start = this.pos;
      frame.counts = isPiece(own) ? noCounts() : counts;
      frame.depth = depth;
      frame.parent = parent?.role ?? Role.Other;
      frame.counted = counted;
      if (own === Role.ResourceSpans) this.layout.openResourceSpans();
      else if (own === Role.ScopeSpans) this.layout.openScopeSpans();
      this.pos++;
      return object ? Expect.FirstKey : Expect.FirstElement;
    }
    if (c === QUOTE) this.string();
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.number();
    else if (c === 0x74) this.literal('true');
    else if (c === 0x66) this.literal('false');
    else if (c === 0x6e) this.literal('null');
    else throw this.unexpected();
    return Expect.After;
  }

  /** A member's name and colon; the role of its value. */
  private member(object: Frame): Role {
    if (this.body[this.pos] !== QUOTE) throw this.unexpected();
    const start = this.pos;
    const escaped = this.string();
    const end = this.pos;
    this.skipSpace();
    if (this.body[this.pos] !== 0x3a) throw this.unexpected();
    this.pos++;
    const members = MEMBER_BYTES.get(object.role);
    if (!members) return Role.Other;
    if (escaped) {
      const name = JSON.parse(this.body.toString('utf8', start, end)) as string;
      const names = MEMBERS[object.role]!;
      return Object.hasOwn(names, name) ? names[name]! : Role.Other;
    }
    const length = end - start - 2;
    for (const [name, role] of members) {
      if (name.length !== length) continue;
      let i = 0;
      while (i < length && this.body[start + 1 + i] === name[i]) i++;
      if (i === length) return role;
    }
    return Role.Other;
  }

  /** An array's next element: counted where OTLP_BOUNDS counts it; its role. */
  private element(array: Frame): Role {
    const counts = array.counts;
    if (counts) {
      if (array.role === Role.Attributes && isPiece(array.parent)) counts.attributes++;
      else if (array.role === Role.EventList) counts.events++;
      else if (array.role === Role.LinkList) counts.links++;
    }
    return ELEMENTS[array.role] ?? Role.Other;
  }

  private close(frame: Frame): void {
    this.pos++;
    this.open--;
    const range = { start: frame.start, end: this.pos };
    if (!frame.object) return;
    if (frame.role === Role.ResourceSpans) this.layout.closeResourceSpans();
    else if (frame.role === Role.ScopeSpans) this.layout.closeScopeSpans();
    else if (frame.role === Role.Resource) this.layout.setResource(range, frame.counts!);
    else if (frame.role === Role.Scope) this.layout.setScope(range, frame.counts!);
    else if (frame.role === Role.Span) this.layout.span(range, frame.counts!);
  }

  /** A string at pos, validated as JSON.parse would; whether it holds an escape. */
  private string(): boolean {
    const body = this.body;
    let pos = this.pos + 1;
    let escaped = false;
    for (;;) {
      if (pos >= body.length) throw new OtlpBodyError('not JSON: a string is not closed');
      const c = body[pos]!;
      if (c === QUOTE) break;
      if (c < 0x20) throw new OtlpBodyError(`not JSON: a control character in a string at position ${pos}`);
      if (c === BACKSLASH) {
        escaped = true;
        const next = body[pos + 1];
        if (next === 0x75) {
          for (let i = 2; i < 6; i++) {
            if (!isHex(body[pos + i])) throw new OtlpBodyError(`not JSON: a bad \\u escape at position ${pos}`);
          }
          pos += 6;
          continue;
        }
        if (next === undefined || !SIMPLE_ESCAPES.has(next)) {
          throw new OtlpBodyError(`not JSON: a bad escape at position ${pos}`);
        }
        pos += 2;
        continue;
      }
      pos++;
    }
    this.pos = pos + 1;
    return escaped;
  }

  /** -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
  private number(): void {
    const body = this.body;
    let pos = this.pos;
    if (body[pos] === 0x2d) pos++;
    if (body[pos] === 0x30) pos++;
    else if (isDigit(body[pos])) while (isDigit(body[pos])) pos++;
    else throw this.unexpected(pos);
    if (body[pos] === 0x2e) {
      pos++;
      if (!isDigit(body[pos])) throw this.unexpected(pos);
      while (isDigit(body[pos])) pos++;
    }
    if (body[pos] === 0x65 || body[pos] === 0x45) {
      pos++;
      if (body[pos] === 0x2b || body[pos] === 0x2d) pos++;
      if (!isDigit(body[pos])) throw this.unexpected(pos);
      while (isDigit(body[pos])) pos++;
    }
    this.pos = pos;
  }

  private literal(word: string): void {
    for (let i = 0; i < word.length; i++) {
      if (this.body[this.pos + i] !== word.charCodeAt(i)) throw this.unexpected(this.pos + i);
    }
    this.pos += word.length;
  }

  private skipSpace(): void {
    const body = this.body;
    let pos = this.pos;
    for (;;) {
      const c = body[pos];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  private unexpected(pos = this.pos): OtlpBodyError {
    return pos >= this.body.length
      ? new OtlpBodyError('not JSON: the body ends early')
      : new OtlpBodyError(`not JSON: unexpected character at position ${pos}`);
  }
}

const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) =>
  c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
const isPiece = (role: Role) => role === Role.Span || role === Role.Resource || role === Role.Scope;
const isList = (role: Role) => ELEMENTS[role] !== undefined;
