export function Greeting(props: { name: string }) {
  let text = "Hello, " + props.name;
  var props = null; // a parameter: left alone
  return <p>{text}</p>;
}
