export { connectRedis } from './connect.ts';
