/** The "parsers never throw" rule of CarrierAdapter, in one place. */
import type { CarrierAdapter } from '../types.ts';

/** `read` as a carrier's `parse`: an exception while reading becomes an error outcome naming `what` was unreadable. */
export function neverThrows(read: CarrierAdapter['parse'], what = 'answer'): CarrierAdapter['parse'] {
  return (awb, response) => {
    try {
      return read(awb, response);
    } catch (err) {
      return { outcome: 'error', error: `unreadable ${what}: ${err instanceof Error ? err.message : 'unexpected value'}`.slice(0, 200) };
    }
  };
}
