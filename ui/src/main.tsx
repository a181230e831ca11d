import { render } from 'preact';
import { App } from './app';
import { applyTheme, savedTheme } from './theme';
import './styles.css';

applyTheme(savedTheme());
render(<App />, document.getElementById('app')!);
