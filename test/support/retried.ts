/**
 * Kafka admin calls right after a topic is created (or the broker restarted) may see stale
 * metadata: the services tests try such a call again, every 500 ms, up to `attempts` times.
 */
export async function retried<T>(fn: () => Promise<T>, attempts = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
