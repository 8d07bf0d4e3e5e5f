// Node 20's V8 (11.3) takes a slow runtime path for an object literal that adds a property
// after a spread, `{ ...object, key: value }`: 0.9–1.4 µs where a copy by Object.assign and a
// store take ~0.13 µs (measured in bench/PROFILE.md), and more under GC pressure in a busy
// process. Request paths build such copies per call, so they use this instead.

/**
 * The same object as `{ ...object, [key]: value }`: the own enumerable properties of
 * `object` in their order (symbols too), then `key` set to `value` (in place when `object`
 * has it). An `object` with an own `__proto__` key is copied by spread, which defines that
 * key where Object.assign would set the copy's prototype.
 */
export function copyWith<T extends object, K extends PropertyKey, V>(object: T | undefined, key: K, value: V): Omit<T, K> & Record<K, V> {
  if (key === '__proto__' || (object !== undefined && object !== null && Object.hasOwn(object, '__proto__'))) return { ...object, [key]: value } as Omit<T, K> & Record<K, V>;
  const copy = Object.assign({}, object) as Record<PropertyKey, unknown>;
  copy[key] = value;
  return copy as Omit<T, K> & Record<K, V>;
}
