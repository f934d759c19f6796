// new Date(ms).toISOString(), with the part up to the second kept from the previous call in the same second: every
// unpaid 402 writes two of these (the sign-in-with-x challenge's issuedAt and expirationTime), and toISOString
// cost ~1.7 us a call against ~0.3 us this way (micro-benchmark, 200,000 calls, the shared 2-core machine).
// Each instance keeps one second; a caller wanting two times a fixed distance apart keeps one each.

/** A formatter equal to `(ms) => new Date(ms).toISOString()`. */
export function isoTimeFormatter(): (ms: number) => string {
  let second = Number.NaN;
  let upToSecond = '';
  return (ms) => {
    const at = Math.floor(ms / 1000);
    if (at !== second) {
      const whole = new Date(ms).toISOString();
      // years 0 to 9999 only ("YYYY-MM-DDTHH:MM:SS.sssZ"); any other is formatted whole each time
      if (whole.length !== 24) return whole;
      second = at;
      upToSecond = whole.slice(0, 20);
    }
    const millis = ms - at * 1000;
    return `${upToSecond}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
  };
}
