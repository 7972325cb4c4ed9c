export { CarrierDetector, type ConfidenceBasis, type DetectCandidate, type Detection } from './detect.ts';
export { shapeOf, type Shape } from './shape.ts';
export { probeCandidates, MAX_PROBES, type ProbeAnswer, type ProbeOutcome } from './probe.ts';
