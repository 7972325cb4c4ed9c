import { benchApi } from './.api-smoke.ts';
import { printResults } from './report.ts';
printResults('smoke', await benchApi());
