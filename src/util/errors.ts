/**
 * The base class of every error this project throws: a stable `code` that programs and tests
 * match on (undici's style), a message for people, and the `cause` it wraps, if any. `name` is
 * the subclass's name, so logs say which error it was without a constructor per class.
 */
export class CodedError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}
