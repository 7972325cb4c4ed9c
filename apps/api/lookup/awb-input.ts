import type { Detection } from '../../../lib/detect/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError } from '../http/errors.ts';

/** What these functions use of the API's dependencies. */
export type DetectionDeps = Pick<ApiDeps, 'product'>;

/** decisions.md: trimmed, 4 to 40 characters of [A-Za-z0-9-]. The one place this rule lives. */
const AWB_PATTERN = /^[A-Za-z0-9-]{4,40}$/;

/** The trimmed AWB, or the 400 it deserves. */
export function checkAwb(raw: unknown): string | ApiError {
  const awb = typeof raw === 'string' ? raw.trim() : '';
  if (!AWB_PATTERN.test(awb)) return new ApiError('invalid_awb', 'The consignment number must be 4 to 40 letters, digits or dashes.');
  return awb;
}

/** What a lookup without a carrier will ask: the detection, or 400 `carrier_not_detected`. */
export function detectionFor(deps: DetectionDeps, awb: string): Detection | ApiError {
  const detection = deps.product.detector.detect(awb);
  if (detection.candidates.length === 0) {
    return new ApiError('carrier_not_detected', `No supported carrier uses consignment numbers shaped like ${awb.toUpperCase()}. Name the carrier: /v1/track/{carrier}/{awb}.`);
  }
  return detection;
}
