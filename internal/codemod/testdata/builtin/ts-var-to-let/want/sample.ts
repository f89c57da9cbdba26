export function area(width: number, height?: number): number {
  let w = width;
  var h: number = height ?? width; // a type annotation: left alone
  var width = 2; // a parameter: left alone
  return w * h * width;
}

export const twice = <T,>(value: T): T[] => {
  let out = [value, value];
  return out;
};
