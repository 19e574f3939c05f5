import { render } from 'solid-js/web';

function App() {
  return <main><h1>Switchyard console</h1><p>Coming soon.</p></main>;
}

render(() => <App />, document.getElementById('root')!);
