/**
 * One error hierarchy with stable codes (undici style), one file per family under core/errors/.
 * Every module throws these; only gateway/error-response.ts turns them into HTTP statuses and
 * OpenAI error bodies.
 */
export { ConveyorError } from './errors/conveyor-error.js';
export * from './errors/request-errors.js';
export * from './errors/upstream-errors.js';
export * from './errors/tool-errors.js';
export * from './errors/gateway-errors.js';
