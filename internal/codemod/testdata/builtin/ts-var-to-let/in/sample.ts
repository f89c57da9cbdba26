export function area(width: number, height?: number): number {
  var w = width;
  var h: number = height ?? width; // a type annotation: left alone
  var width = 2; // a parameter: left alone
  return w * h * width;
}

export const twice = <T,>(value: T): T[] => {
  var out = [value, value];
  return out;
};
