/** A body that is not an OTLP trace export gatelog can read: the route answers 400 with the reason. */
export class OtlpBodyError extends Error {}
