import type { Detection } from '../../../lib/detect/index.ts';
import { AWB_RULE, parseAwb, type Awb } from '../../../lib/schemas/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError } from '../http/errors.ts';

/** What these functions use of the API's dependencies. */
export type DetectionDeps = Pick<ApiDeps, 'product'>;

/** A request's AWB (path or body) read by the one parser (lib/schemas/awb.ts), or the 400 it deserves. */
export function checkAwb(raw: unknown): Awb | ApiError {
  return parseAwb(raw) ?? new ApiError('invalid_awb', `The consignment number must be ${AWB_RULE}.`);
}

/** What a lookup without a carrier will ask: the number and its detection, or 400 `carrier_not_detected`. */
export function detectionFor(deps: DetectionDeps, awb: Awb): Detected | ApiError {
  const detection = deps.product.detector.detect(awb);
  if (detection.candidates.length === 0) {
    const message = `No supported carrier uses consignment numbers shaped like ${awb}. Name the carrier: /v1/track/{carrier}/{awb}.`;
    return new ApiError('carrier_not_detected', message);
  }
  return { awb, ...detection };
}

/** A number and the carriers it may belong to. */
export interface Detected extends Detection {
  awb: Awb;
}
