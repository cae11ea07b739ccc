"""Headless Chromium driven through the DevTools protocol, over a pipe (no port, no
websocket library): the tests click, type, scroll and select as a user does, with real
input events at the coordinates the page lays out, and take screenshots.

    with Browser(chromium_path, profile_dir) as b:
        page = b.open('file:///tmp/report.html')
        page.eval('document.title')
        page.click('.timeline canvas', dx=300, dy=40)
        page.screenshot('out.png', selector='.timeline')
"""
import base64
import contextlib
import fcntl
import json
import os
import subprocess
import time


class DevToolsError(Exception):
    pass


class Browser:
    def __init__(self, chromium, profile, width=1600, height=1200):
        self.width, self.height = width, height
        self._to_r, self._to_w = os.pipe()    # our commands: chromium reads fd 3
        self._from_r, self._from_w = os.pipe()  # its replies: chromium writes fd 4

        def fds():
            # Above 3 and 4 first, so that neither dup2 overwrites the other's source.
            r = fcntl.fcntl(self._to_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(self._from_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)  # inheritable
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [chromium, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--remote-debugging-pipe',
             '--hide-scrollbars', '--force-device-scale-factor=1', f'--user-data-dir={profile}',
             f'--window-size={width},{height}', 'about:blank'],
            close_fds=False, preexec_fn=fds,  # fds 3 and 4 are made in the child, after the fork
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(self._to_r)
        os.close(self._from_w)
        self._buf = b''
        self._id = 0
        self.events = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.send('Browser.close')
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stderr.close()
        os.close(self._to_w)
        os.close(self._from_r)

    def _read(self, deadline):
        while b'\0' not in self._buf:
            if time.monotonic() > deadline:
                raise DevToolsError('no reply from chromium')
            chunk = os.read(self._from_r, 1 << 20)
            if not chunk:
                raise DevToolsError('chromium closed the pipe')
            self._buf += chunk
        msg, self._buf = self._buf.split(b'\0', 1)
        return json.loads(msg)

    def send(self, method, session=None, timeout=120, **params):
        self._id += 1
        msg = {'id': self._id, 'method': method, 'params': params}
        if session:
            msg['sessionId'] = session
        os.write(self._to_w, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get('id') == self._id:
                if 'error' in reply:
                    raise DevToolsError(f'{method}: {reply["error"]}')
                return reply.get('result', {})
            self.events.append(reply)

    def wait_event(self, method, session=None, timeout=120):
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self.events):
            if e.get('method') == method and (session is None or e.get('sessionId') == session):
                return self.events.pop(i)
        while True:
            e = self._read(deadline)
            if e.get('method') == method and (session is None or e.get('sessionId') == session):
                return e
            self.events.append(e)

    def open(self, url):
        target = self.send('Target.createTarget', url='about:blank')['targetId']
        session = self.send('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
        page = Page(self, session)
        page.send('Page.enable')
        page.send('Runtime.enable')
        page.send('Emulation.setDeviceMetricsOverride', width=self.width, height=self.height, deviceScaleFactor=1,
                  mobile=False)
        page.send('Page.navigate', url=url)
        self.wait_event('Page.loadEventFired', session)
        return page


class Page:
    def __init__(self, browser, session):
        self.b, self.session = browser, session

    def send(self, method, **params):
        return self.b.send(method, session=self.session, **params)

    def console(self):
        """The console messages and uncaught exceptions so far."""
        out = []
        for e in self.b.events:
            if e.get('sessionId') != self.session:
                continue
            if e.get('method') == 'Runtime.consoleAPICalled':
                out.append(' '.join(str(a.get('value', a.get('description', ''))) for a in e['params']['args']))
            elif e.get('method') == 'Runtime.exceptionThrown':
                out.append(e['params']['exceptionDetails'].get('exception', {}).get('description', 'exception'))
        return out

    def eval(self, expression):
        r = self.send('Runtime.evaluate', expression=expression, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in r:
            raise DevToolsError(f'{expression[:80]}: {r["exceptionDetails"]}')
        return r['result'].get('value')

    def box(self, selector):
        """The element's box in the viewport, scrolled into view first: (x, y, width, height)."""
        r = self.eval(f'(function () {{ var e = document.querySelector({json.dumps(selector)});'
                      ' if (!e) return null; e.scrollIntoView({block: "center"});'
                      ' var r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()')
        if r is None:
            raise DevToolsError(f'no element {selector}')
        return r

    def mouse(self, kind, x, y, **extra):
        self.send('Input.dispatchMouseEvent', type=kind, x=x, y=y, **extra)

    def click(self, selector, dx=None, dy=None):
        x, y, w, h = self.box(selector)
        x += w / 2 if dx is None else dx
        y += h / 2 if dy is None else dy
        self.mouse('mouseMoved', x, y)
        self.mouse('mousePressed', x, y, button='left', buttons=1, clickCount=1)
        self.mouse('mouseReleased', x, y, button='left', buttons=0, clickCount=1)
        return x, y

    def right_click(self, selector):
        x, y, w, h = self.box(selector)
        x, y = x + w / 2, y + h / 2
        self.mouse('mouseMoved', x, y)
        self.mouse('mousePressed', x, y, button='right', buttons=2, clickCount=1)
        self.mouse('mouseReleased', x, y, button='right', buttons=0, clickCount=1)

    def dblclick(self, selector, dx=None, dy=None):
        x, y, w, h = self.box(selector)
        x += w / 2 if dx is None else dx
        y += h / 2 if dy is None else dy
        self.mouse('mouseMoved', x, y)
        for n in (1, 2):
            self.mouse('mousePressed', x, y, button='left', buttons=1, clickCount=n)
            self.mouse('mouseReleased', x, y, button='left', buttons=0, clickCount=n)

    def hover(self, selector, dx, dy):
        x, y, w, h = self.box(selector)
        self.mouse('mouseMoved', x + dx, y + dy)

    def wheel(self, selector, dx, dy, delta_y):
        x, y, w, h = self.box(selector)
        self.mouse('mouseWheel', x + dx, y + dy, deltaX=0, deltaY=delta_y)

    def drag(self, selector, dx0, dy, dx1, steps=5):
        x, y, w, h = self.box(selector)
        self.mouse('mouseMoved', x + dx0, y + dy)
        self.mouse('mousePressed', x + dx0, y + dy, button='left', buttons=1, clickCount=1)
        for i in range(1, steps + 1):
            self.mouse('mouseMoved', x + dx0 + (dx1 - dx0) * i / steps, y + dy, button='left', buttons=1)
        self.mouse('mouseReleased', x + dx1, y + dy, button='left', buttons=0, clickCount=1)

    def type(self, selector, text):
        """Focus the field, select what it holds, and type text over it (input events fire)."""
        self.eval(f'(function () {{ var e = document.querySelector({json.dumps(selector)}); e.focus(); e.select(); }})()')
        if text:
            self.send('Input.insertText', text=text)
        else:
            self.send('Input.dispatchKeyEvent', type='keyDown', key='Backspace', code='Backspace',
                      windowsVirtualKeyCode=8)
            self.send('Input.dispatchKeyEvent', type='keyUp', key='Backspace', code='Backspace',
                      windowsVirtualKeyCode=8)

    def select(self, selector, index):
        """Choose the option at index with the keyboard, as a user of a <select> does."""
        self.eval(f'document.querySelector({json.dumps(selector)}).focus()')
        current = self.eval(f'document.querySelector({json.dumps(selector)}).selectedIndex')
        key = ('ArrowDown', 40) if index > current else ('ArrowUp', 38)
        for _ in range(abs(index - current)):
            self.send('Input.dispatchKeyEvent', type='keyDown', key=key[0], code=key[0], windowsVirtualKeyCode=key[1])
            self.send('Input.dispatchKeyEvent', type='keyUp', key=key[0], code=key[0], windowsVirtualKeyCode=key[1])

    def screenshot(self, path, selector=None, full_width=False):
        """The page, or the element's box (with full_width, that height across the window)."""
        params = {'format': 'png'}
        # a sticky header would cover the top of what is shot
        self.eval('document.querySelectorAll("nav").forEach(function (n) { n.style.position = "static"; })')
        if selector:
            x, y, w, h = self.box(selector)
            sx, sy = self.eval('[window.scrollX, window.scrollY]')
            if full_width:
                x, w = 0, self.eval('document.documentElement.clientWidth')
            params['clip'] = {'x': x + sx, 'y': y + sy, 'width': w, 'height': h, 'scale': 1}
            params['captureBeyondViewport'] = True
        data = self.send('Page.captureScreenshot', **params)['data']
        with open(path, 'wb') as f:
            f.write(base64.b64decode(data))


@contextlib.contextmanager
def opened(chromium, profile, page, problems, width=1400, height=1000):
    """A page opened in a fresh headless Chromium, for a test's checks; when they are done,
    any console message or uncaught exception is one more problem (every page test ends so)."""
    with Browser(chromium, profile, width=width, height=height) as b:
        p = b.open('file://' + page)
        yield p
        if p.console():
            problems.append(f'console: {p.console()[:2]}')
