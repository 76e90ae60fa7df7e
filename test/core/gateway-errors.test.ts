import { describe, expect, it } from 'vitest';
import { GatewayBusyError } from '../../core/errors.ts';

describe('GatewayBusyError', () => {
  it('says how many requests the gateway runs at once, in the singular for one', () => {
    expect(new GatewayBusyError(1, 0).message).toBe('the gateway is at its limit of 1 request at once, with 0 more waiting; retry shortly');
    expect(new GatewayBusyError(8, 2).message).toBe('the gateway is at its limit of 8 requests at once, with 2 more waiting; retry shortly');
  });
});
