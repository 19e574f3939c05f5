import { render } from 'solid-js/web';
import { App } from './App';
import { loadStartLanguage } from './i18n';
import './ui/styles.css';

await loadStartLanguage();
render(() => <App />, document.getElementById('root')!);
