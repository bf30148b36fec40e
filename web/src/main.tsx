/** @module main — mounts the dashboard. */
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

render(<App />, document.getElementById('app') as HTMLElement);
