/**
 * A first-in first-out queue that can also drop an item from the middle (matching's tags that
 * skipped ahead). Emptying it only rewinds its indices: the common one-message-at-a-time traffic
 * never resizes the array. The engine's matching and sends and shm's queued output use it.
 */
export class Queue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  private tail = 0;

  get length(): number {
    return this.tail - this.head;
  }

  at(index: number): T {
    return this.items[this.head + index] as T;
  }

  push(item: T): void {
    this.items[this.tail] = item;
    this.tail += 1;
  }

  shift(): T | undefined {
    if (this.head === this.tail) return undefined;
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head === this.tail) {
      this.head = 0;
      this.tail = 0;
    } else if (this.head > 1024 && this.head * 2 > this.tail) {
      this.items = this.items.slice(this.head, this.tail);
      this.tail -= this.head;
      this.head = 0;
    }
    return item;
  }

  removeAt(index: number): T {
    if (index === 0) return this.shift() as T;
    const item = this.items.splice(this.head + index, 1)[0] as T;
    this.tail -= 1;
    return item;
  }

  /** Removes and returns every item for which `predicate` holds. */
  removeWhere(predicate: (item: T) => boolean): T[] {
    const removed: T[] = [];
    const kept: T[] = [];
    for (let i = this.head; i < this.tail; i += 1) (predicate(this.items[i] as T) ? removed : kept).push(this.items[i] as T);
    this.items = kept;
    this.head = 0;
    this.tail = kept.length;
    return removed;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.head; i < this.tail; i += 1) yield this.items[i] as T;
  }
}
