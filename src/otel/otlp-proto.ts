/**
 * The OTLP trace messages, read from the OpenTelemetry project's own definitions (proto/, unchanged) by
 * protobufjs once, on the first OTLP request.
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import protobuf from 'protobufjs';

const PROTO_DIR = fileURLToPath(new URL('../../../proto/', import.meta.url));
const SERVICE = 'opentelemetry/proto/collector/trace/v1/trace_service.proto';

export interface OtlpTypes {
  request: protobuf.Type;
  response: protobuf.Type;
  /** The pieces of a request the route decodes one at a time (otlp-decode.ts). */
  resource: protobuf.Type;
  scope: protobuf.Type;
  span: protobuf.Type;
  /** google.rpc.Status, what OTLP/HTTP answers a refused request with (its `details` left out). */
  status: protobuf.Type;
}

let types: OtlpTypes | null = null;

export function otlpTypes(): OtlpTypes {
  if (types) return types;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
  root.loadSync(SERVICE);
  const status = new protobuf.Type('Status')
    .add(new protobuf.Field('code', 1, 'int32'))
    .add(new protobuf.Field('message', 2, 'string'));
  new protobuf.Root().define('google.rpc').add(status);
  types = {
    request: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    resource: root.lookupType('opentelemetry.proto.resource.v1.Resource'),
    scope: root.lookupType('opentelemetry.proto.common.v1.InstrumentationScope'),
    span: root.lookupType('opentelemetry.proto.trace.v1.Span'),
    status,
  };
  return types;
}
