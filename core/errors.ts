/**
 * One error hierarchy with stable codes (undici style), one file per family under core/errors/.
 * Every module throws these; only gateway/error-response.ts turns them into HTTP statuses and
 * OpenAI error bodies.
 */
export { ConveyorError } from './errors/conveyor-error.ts';
export * from './errors/request-errors.ts';
export * from './errors/upstream-errors.ts';
export * from './errors/tool-errors.ts';
export * from './errors/gateway-errors.ts';
